"""Misconception: once the interval is up, admission was "considered", so the count restarts even
if too few wait (ratio check fails). interval 4, ratio 1: too few wait at step 4, enough at 5: opens at 8, not 5.
"""


def admission_open(self) -> bool:
    """May requests be admitted before this step?"""
    cfg = self.config
    self.steps_since_admission += 1
    if not self.running:
        self.steps_since_admission = 0
        return True
    if self.steps_since_admission < cfg.schedule_interval:
        return False
    # The interval is up: this is the step where the scheduler looks at the queue.
    self.steps_since_admission = 0
    return len(self.waiting) >= cfg.waiting_served_ratio * len(self.running)
