"""Misconception: "requests waiting per running one" as a whole number (integer
division), which agrees for whole ratios but not fractional ones: ratio 1.2, 3 waiting,
2 running gives 3 // 2 = 1 < 1.2 (closed), though 3 >= 1.2 x 2 (open).
"""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    self.steps_since_admission += 1
    if self.running:
        if self.steps_since_admission < self.config.schedule_interval:
            return False
        per_running = len(self.waiting) // len(self.running)
        if per_running < self.config.waiting_served_ratio:
            return False
    self.steps_since_admission = 0
    return True
