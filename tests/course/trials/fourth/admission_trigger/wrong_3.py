"""Misconception: admission is pointless when nobody waits, so the step returns False early and the
interval keeps running (the ratio test would pass with ratio 0 and reset it). Interval 4, ratio 0:
after 6 quiet steps a request that arrives is let in at once, where the count restarted at each open."""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    if self.running and not self.waiting:
        self.steps_since_admission += 1
        return False                       # no one to admit
    self.steps_since_admission += 1
    if self.running and (
            self.steps_since_admission < self.config.schedule_interval
            or len(self.waiting) < self.config.waiting_served_ratio * len(self.running)):
        return False
    self.steps_since_admission = 0
    return True
