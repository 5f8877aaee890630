"""Right: counts the call first, then decides in one expression (nothing runs, or the interval
has passed and waiting >= ratio x running); the counter restarts whenever it says yes.
"""


def admission_open(self) -> bool:
    """May requests be admitted before this step? (see the stub's contract)"""
    cfg = self.config
    self.steps_since_admission += 1
    running = len(self.running)
    open_now = running == 0 or (
        self.steps_since_admission >= cfg.schedule_interval
        and len(self.waiting) >= cfg.waiting_served_ratio * running)
    if open_now:
        self.steps_since_admission = 0      # the interval counts from here
    return open_now
