"""Misconception: "always when nothing runs" is a shortcut outside the count, so opening on an idle engine
neither counts nor resets steps_since_admission. Interval 4: 3 closed steps, the engine drains, it opens
idle, and the very next step opens again (count reaches 4) instead of 4 steps later.
"""


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
    if self.steps_since_admission < self.config.schedule_interval:
        return False
    if len(self.waiting) < self.config.waiting_served_ratio * len(self.running):
        return False
    self.steps_since_admission = 0
    return True
