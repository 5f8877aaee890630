"""Misconception: with nothing running admission is simply open, so that case returns before
the count is touched, which keeps stale steps: interval 4, count 3, an idle step (True, 3),
then the next busy step opens at count 4 (should be count 1, closed)."""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    if not self.running:
        return True                                  # nothing to disturb
    self.steps_since_admission += 1
    if (self.steps_since_admission >= self.config.schedule_interval
            and len(self.waiting) >= self.config.waiting_served_ratio * len(self.running)):
        self.steps_since_admission = 0
        return True
    return False
