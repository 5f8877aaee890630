"""Right: puts the victim at the head by appending it and rotating the deque one place
right (not appendleft), and drops it from the running list by identity with a slice
assignment that keeps the same list object; counts are bumped before the memory goes."""


def preempt(self, request):
    """Preempt ``request`` by recomputation. Afterwards:

    - it no longer runs, and holds no KV memory: ``self.kv.free(request)`` gives
      its blocks back to the free list;
    - none of its tokens counts as computed, though every token it has is kept:
      when it is admitted again, prompt and output are recomputed together;
    - it is the next request to be admitted;
    - the preemption is counted on the request and on the scheduler, and the
      scheduler knows one happened in this step (``self.preempted``).
    """
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
    # in place: anything holding this list sees the change
    self.running[:] = [r for r in self.running if r is not request]
    self.kv.free(request)
    request.num_computed_tokens = 0          # its tokens (prompt + output) all stay
    self.waiting.append(request)
    self.waiting.rotate(1)                   # the last becomes the first
