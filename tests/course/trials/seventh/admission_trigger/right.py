"""Right: the same rule as the engine's, but written as a chain of early
returns rather than one boolean expression: every call counts a step, and
each way of saying yes resets the count at the point it says yes, so the
count always means "steps since admission was last open, this one
included"."""


def admission_open(self) -> bool:
    self.steps_since_admission += 1
    running = len(self.running)
    if running == 0:
        self.steps_since_admission = 0
        return True
    if self.steps_since_admission < self.config.schedule_interval:
        return False
    if len(self.waiting) < self.config.waiting_served_ratio * running:
        return False
    self.steps_since_admission = 0
    return True
