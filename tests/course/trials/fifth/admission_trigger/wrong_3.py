"""Misconception: a step counts toward the interval only if enough requests waited in
it (the ratio is checked first and returns before counting). Wrong with interval=2,
ratio=1, 1 running: a step with 0 waiting then a step with 1 waiting: closed, not open."""


def admission_open(self) -> bool:
    """May requests be admitted now? (see the stub's contract)"""
    if not self.running:
        self.steps_since_admission = 0
        return True
    if len(self.waiting) < self.config.waiting_served_ratio * len(self.running):
        return False                          # nothing worth admitting: not a step that counts
    self.steps_since_admission += 1
    if self.steps_since_admission >= self.config.schedule_interval:
        self.steps_since_admission = 0
        return True
    return False
