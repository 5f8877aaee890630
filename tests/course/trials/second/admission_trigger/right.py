"""Correct, written differently: computes the would-be count first and commits it (kept or reset) in one
assignment at the end, and compares the ratio as running * ratio <= waiting.
"""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    elapsed = self.steps_since_admission + 1
    running = len(self.running)
    is_open = running == 0 or (
        elapsed >= self.config.schedule_interval
        and running * self.config.waiting_served_ratio <= len(self.waiting))
    self.steps_since_admission = 0 if is_open else elapsed
    return is_open
