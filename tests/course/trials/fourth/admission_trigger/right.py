"""Right, written differently: it counts the step, then builds the answer as one boolean (idle, or
interval reached and enough waiting per running request), compares waiting / running as a cross
product, and resets the count only through that single answer."""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    self.steps_since_admission += 1
    running, waiting = len(self.running), len(self.waiting)
    interval_up = self.steps_since_admission >= self.config.schedule_interval
    enough_waiting = waiting >= self.config.waiting_served_ratio * running
    is_open = running == 0 or (interval_up and enough_waiting)
    if is_open:
        self.steps_since_admission = 0
    return is_open
