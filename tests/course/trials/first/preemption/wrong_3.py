"""Misconception: the scheduler counts preemption events (steps that had to preempt), so its
counter goes up only the first time in a step, as self.preempted flips. Goes wrong when one
step preempts two requests: num_preemptions grows by 1 here, it should grow by 2."""


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
    self.waiting.appendleft(request)
    request.num_preemptions += 1
    if not self.preempted:
        self.num_preemptions += 1
        self.preempted = True
