"""Right: gives the memory back first, then rebuilds the running list in place without
the victim (a slice assignment filtering by identity, rather than list.remove), bumps
both counters and the step's flag, and puts the request at the head of the queue; its
tokens are untouched, only num_computed_tokens goes back to 0.
"""


def preempt(self, request):
    self.kv.free(request)
    self.running[:] = [other for other in self.running if other is not request]
    request.num_computed_tokens = 0
    request.num_preemptions = request.num_preemptions + 1
    self.num_preemptions = self.num_preemptions + 1
    self.preempted = True
    self.waiting.appendleft(request)
