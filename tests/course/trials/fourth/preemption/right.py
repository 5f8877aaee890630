"""Right, written differently: it rebuilds running without the request (a new list, not an
in-place remove), returns the blocks, and requeues with rotate() on the deque (append, then
rotate it to the front) instead of appendleft; counters bumped first."""


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
    self.running[:] = [r for r in self.running if r is not request]
    self.kv.free(request)
    request.num_computed_tokens = 0      # prompt + output so far go through one prefill
    self.waiting.append(request)
    self.waiting.rotate(1)               # the last becomes the first
