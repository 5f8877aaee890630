"""Misconception: "the scheduler preempts the most recently admitted request", so the victim
is popped off the end of the running list, not removed by identity. Wrong when preempt is
called on another: running [a, b, c], preempt(a) drops c from running and leaves a there."""


def preempt(self, request):
    """Preempt ``request`` by recomputation (see the stub's contract)."""
    self.running.pop()                       # the newest is the victim
    self.kv.free(request)
    request.num_computed_tokens = 0
    self.waiting.appendleft(request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
