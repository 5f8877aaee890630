"""Misconception: a preempted request is requeued like any other, at the back of the waiting
queue. Goes wrong as soon as anyone else waits: the victim is admitted after them, not next
(e.g. preempt B while C waits: the queue becomes [C, B], it should be [B, C])."""


def preempt(self, request):
    """Preempt ``request`` by recomputation. Afterwards:

    - it no longer runs, and holds no KV memory (its blocks are free again);
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
