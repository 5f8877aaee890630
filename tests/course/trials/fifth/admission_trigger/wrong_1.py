"""Misconception: schedule_interval is a fixed period: when it is up the count restarts
whether or not enough requests wait, so a due step missed for lack of waiting ones waits
a whole new interval. interval=3, ratio=1: too few waiting at step 3, enough at 4: closed, not open."""


def admission_open(self) -> bool:
    """May requests be admitted now? (see the stub's contract)"""
    if not self.running:
        self.steps_since_admission = 0
        return True
    self.steps_since_admission += 1
    if self.steps_since_admission < self.config.schedule_interval:
        return False
    self.steps_since_admission = 0            # the interval is up: the next one starts
    return len(self.waiting) >= self.config.waiting_served_ratio * len(self.running)
