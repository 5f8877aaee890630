"""Misconception: the interval restarts whenever it elapses, even if the ratio keeps admission
closed (it counts times considered, not steps since admission was last open). Goes wrong with
interval 2, ratio 1, 1 running, waiting 0, 0, then 1: step 3 should open; here it stays shut."""


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
