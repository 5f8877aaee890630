"""Misconception: with nobody waiting there is nothing to admit, so admission stays closed
(and the interval is not restarted). Goes wrong with schedule_interval=4, ratio 0: a request
arriving after an idle stretch is admitted at once instead of at the interval's end."""


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
    if not self.waiting:
        return False
    if (self.steps_since_admission >= self.config.schedule_interval
            and len(self.waiting) >= self.config.waiting_served_ratio * len(self.running)):
        self.steps_since_admission = 0
        return True
    return False
