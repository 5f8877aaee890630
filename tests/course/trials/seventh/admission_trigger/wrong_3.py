"""Misconception: "requests come in whole numbers, so the ratio's threshold is
a whole number of requests": waiting_served_ratio x running is truncated to
an int before the comparison. That lowers every fractional threshold: a ratio
of 1.5 with one request running demands 1.5 waiting (so 2), but truncated it
demands only 1.

Concrete input: schedule_interval=1, waiting_served_ratio=1.5, one request
running and one waiting: the contract keeps admission closed (1 < 1.5); this
version opens it (1 >= int(1.5) == 1). Likewise ratio 0.5 with one running
and none waiting opens here (0 >= 0) where the contract says closed.
"""


def admission_open(self) -> bool:
    self.steps_since_admission += 1
    needed = int(self.config.waiting_served_ratio * len(self.running))
    is_open = not self.running or (
        self.steps_since_admission >= self.config.schedule_interval
        and len(self.waiting) >= needed)
    if is_open:
        self.steps_since_admission = 0
    return is_open
