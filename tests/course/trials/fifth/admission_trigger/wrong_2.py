"""Misconception (TGI's way of writing it): the requests needed are a whole number, so
ratio x running is rounded down. Wrong when the product is not whole: ratio=1.5,
1 running, 1 waiting, interval passed: opens, though 1.5 waiting are needed."""
import math


def admission_open(self) -> bool:
    """May requests be admitted now? (see the stub's contract)"""
    if not self.running:
        self.steps_since_admission = 0
        return True
    self.steps_since_admission += 1
    needed = math.floor(self.config.waiting_served_ratio * len(self.running))
    if self.steps_since_admission >= self.config.schedule_interval and len(self.waiting) >= needed:
        self.steps_since_admission = 0
        return True
    return False
