"""Right: counts this step first, then names the reason to keep admission closed (if any)
and resets the count only when none applies; the ratio is compared by multiplication, so
fractional ratios and an empty running list need no division.
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
    cfg = self.config
    closed = bool(self.running) and (
        self.steps_since_admission < cfg.schedule_interval
        or len(self.waiting) < cfg.waiting_served_ratio * len(self.running))
    if not closed:
        self.steps_since_admission = 0
    return not closed
