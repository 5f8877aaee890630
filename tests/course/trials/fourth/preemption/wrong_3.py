"""Misconception: the victim is always the newest running request, so pop() removes it; the
scheduler's own loop only ever passes running[-1], so engine runs agree. Called on any other
request, running [A, B, C], preempt(A) removes C from running and leaves A running without KV."""


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
    self.running.pop()                   # the most recently admitted
    self.kv.free(request)
    request.num_computed_tokens = 0
    self.waiting.appendleft(request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
