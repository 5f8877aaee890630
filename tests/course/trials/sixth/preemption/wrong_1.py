"""Misconception: a preempted request queues again like a new arrival, at the back of the
waiting queue. Right when nothing waits; with requests waiting it is admitted after
them, e.g. waiting [B] then preempt(A) gives [B, A] instead of [A, B].
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
    self.waiting.append(request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
