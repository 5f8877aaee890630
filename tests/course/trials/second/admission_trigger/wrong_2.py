"""Misconception: the ratio works as TGI's min batch size, floor(ratio * running) waiting requests.
Opens too early when ratio * running is fractional: ratio 1.5, 3 running, 4 waiting opens (needs 4.5).
"""
import math


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    self.steps_since_admission += 1
    if self.running:
        if self.steps_since_admission < self.config.schedule_interval:
            return False
        min_waiting = math.floor(self.config.waiting_served_ratio * len(self.running))
        if len(self.waiting) < min_waiting:
            return False
    self.steps_since_admission = 0
    return True
