"""Right: decides from the count this step would reach (count + 1) without touching the
counter first, then writes the counter once: 0 when admission opens (idle or due with
enough waiting), else the new count."""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    steps = self.steps_since_admission + 1
    running = len(self.running)
    is_open = running == 0 or (
        steps >= self.config.schedule_interval
        and len(self.waiting) >= self.config.waiting_served_ratio * running)
    self.steps_since_admission = 0 if is_open else steps
    return is_open
