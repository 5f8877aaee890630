"""Misconception: the victim is always the newest running request, so it is popped off the
end of the running list rather than found. Right for the scheduler's own calls; called
with another request (running [A, B], preempt(A)) it removes B while freeing A's blocks.
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
    self.running.pop()                               # the newest: the one preempted
    self.kv.free(request)
    request.num_computed_tokens = 0
    self.waiting.appendleft(request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
