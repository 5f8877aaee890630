"""Misconception: recomputation means starting the request over, so its generated tokens
are dropped with its KV and it will generate them again (the same under greedy
sampling). A request with prompt [1, 2] and output [7] comes back with output [].
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
    del request.output_token_ids[:]                         # regenerated after the prompt
    request.all_token_ids = list(request.prompt_token_ids)
    request.metrics.num_output_tokens = 0
    self.waiting.appendleft(request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
