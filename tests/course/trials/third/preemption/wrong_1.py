"""Misconception: "requeue" means joining the back of the waiting queue, like a new arrival.
Goes wrong when anything waits: victim V, waiting [A]; afterwards waiting is [A, V], so A is admitted before V.
"""


def preempt(self, request):
    """Preempt ``request`` by recomputation."""
    self.running.remove(request)
    self.kv.free(request)
    request.num_computed_tokens = 0          # recompute prompt and output together
    self.waiting.append(request)             # back in the queue
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
