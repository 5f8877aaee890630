"""Misconception: with nothing running admission is simply open, a shortcut that needs no
bookkeeping, so the step counter is left as it was. Goes wrong with schedule_interval=4 when
the running requests drain mid-interval: the next opening comes early (stale count)."""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    if not self.running:
        return True
    self.steps_since_admission += 1
    due = self.steps_since_admission >= self.config.schedule_interval
    enough = len(self.waiting) >= self.config.waiting_served_ratio * len(self.running)
    if due and enough:
        self.steps_since_admission = 0
        return True
    return False
