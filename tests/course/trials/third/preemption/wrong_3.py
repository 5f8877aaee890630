"""Misconception: the victim is always the newest running request, so pop() the running list's tail.
Wrong when preempt is called on a request that is not last: preempt(running[0]) frees and requeues it but removes running[-1] from running.
"""


def preempt(self, request):
    """Preempt ``request`` by recomputation."""
    self.running.pop()                       # the most recently admitted one
    self.kv.free(request)
    request.num_computed_tokens = 0
    self.waiting.appendleft(request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
