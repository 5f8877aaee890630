"""Misconception: "the interval is a timer: once schedule_interval steps have
passed the scheduler has had its look, so start the next interval", i.e. the
counter is reset whenever the interval has elapsed, even when the
waiting_served_ratio test then keeps admission closed. The contract counts
steps since admission was last *open*, so after a failed ratio test the very
next step may admit.

Concrete input: schedule_interval=2, waiting_served_ratio=1.0, 2 running.
Step 1: counter 1, closed. Step 2: counter 2, but only 1 waits (< 2): closed,
and this version resets the counter to 0. Step 3: 2 wait now; the contract
(counter 3 >= 2, 2 >= 2) opens, this version (counter 1) stays closed.
"""


def admission_open(self) -> bool:
    self.steps_since_admission += 1
    if not self.running:
        self.steps_since_admission = 0
        return True
    if self.steps_since_admission < self.config.schedule_interval:
        return False
    self.steps_since_admission = 0          # the interval is over: a new one starts
    return len(self.waiting) >= self.config.waiting_served_ratio * len(self.running)
