"""Misconception: a preempted request "goes back to the queue", at its tail like any arrival.
Only visible when requests wait at the moment of preemption: waiting [w1], preempt(r) leaves [w1, r], not [r, w1].
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
    self.running.remove(request)
    self.kv.free(request)
    request.num_computed_tokens = 0
    self.waiting.append(request)            # back in the queue
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
