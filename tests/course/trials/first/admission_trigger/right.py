"""Right, written as "steps still to wait": it decides from the count the step would reach
(count + 1) before storing anything, compares the ratio by cross-multiplying in the other
order (ratio * running <= waiting) and writes steps_since_admission once, at the end."""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    reached = self.steps_since_admission + 1
    still_to_wait = self.config.schedule_interval - reached
    is_open = (not self.running) or (
        still_to_wait <= 0
        and self.config.waiting_served_ratio * len(self.running) <= len(self.waiting))
    self.steps_since_admission = 0 if is_open else reached
    return is_open
