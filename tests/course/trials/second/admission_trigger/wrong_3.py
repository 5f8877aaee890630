"""Misconception: the interval is a window that restarts each time it elapses, open or not, so a step the
ratio refuses costs another full interval. Interval 3, ratio 1: refused at step 3 for want of waiters,
a request arrives, and admission waits until step 6 instead of opening at step 4.
"""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    if not self.running:
        self.steps_since_admission = 0
        return True
    self.steps_since_admission += 1
    if self.steps_since_admission < self.config.schedule_interval:
        return False
    self.steps_since_admission = 0                 # the interval is over: a new one starts
    return len(self.waiting) >= self.config.waiting_served_ratio * len(self.running)
