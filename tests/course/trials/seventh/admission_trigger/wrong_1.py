"""Misconception: "with nothing running admission is open anyway, so the
counter does not matter there": the empty-batch case returns True at once,
without counting the step or resetting the counter. The count left over from
the previous busy period then carries into the next one, so the first
interval after an idle spell is cut short.

Concrete input: schedule_interval=3, waiting_served_ratio=0. Two steps with a
request running and the gate closed leave steps_since_admission == 2; the
batch then drains (running == []), a new request arrives and the call returns
True with the counter still 2. On the next call (one request running, one
waiting) this version counts 3 and opens; the contract (admission was open
one step ago) says closed, counter 1.
"""


def admission_open(self) -> bool:
    if not self.running:
        return True
    self.steps_since_admission += 1
    if (self.steps_since_admission >= self.config.schedule_interval
            and len(self.waiting) >= self.config.waiting_served_ratio * len(self.running)):
        self.steps_since_admission = 0
        return True
    return False
