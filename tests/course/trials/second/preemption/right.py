"""Correct, written differently: counts first, then rebuilds self.running in place without the request
(a slice assignment, not list.remove) and requeues it with deque.extendleft.
"""


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
    self.preempted = True
    self.num_preemptions += 1
    request.num_preemptions += 1
    self.running[:] = [r for r in self.running if r is not request]
    self.kv.free(request)
    request.num_computed_tokens = 0
    self.waiting.extendleft((request,))
