"""Right: requeues by appending and rotating the deque one place (same as appendleft),
removes by index with del, and sets the flag before the counts; honours the whole contract.
"""


def preempt(self, request):
    """Preempt ``request`` by recomputation (see the stub's contract)."""
    # Out of the running list, by position: preempt may be asked for any running request.
    del self.running[self.running.index(request)]
    self.kv.free(request)
    # Every token stays (prompt and output); none counts as computed any more.
    request.num_computed_tokens = 0
    # Head of the queue: append, then turn the deque one place to the right.
    self.waiting.append(request)
    self.waiting.rotate(1)
    self.preempted = True
    request.num_preemptions += 1
    self.num_preemptions += 1
