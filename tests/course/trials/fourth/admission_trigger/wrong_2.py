"""Misconception: the interval counts steps since admission was last *considered*: once the
interval is up the count restarts whether or not the ratio let anyone in. Interval 4, ratio 1: a
step at count 4 with too few waiting resets to 0, so the next eligible step is 4 later, not the next one."""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    self.steps_since_admission += 1
    if not self.running:
        self.steps_since_admission = 0
        return True
    if self.steps_since_admission < self.config.schedule_interval:
        return False
    self.steps_since_admission = 0          # the interval is up: start the next one
    return len(self.waiting) >= self.config.waiting_served_ratio * len(self.running)
