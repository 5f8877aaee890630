"""Misconception: recomputation means starting the request over: its generated tokens are
dropped with its KV and sampled again. Greedy runs come out the same; a request preempted after
3 tokens has output_token_ids [] (and sampled ones are redrawn, sent twice when streamed)."""


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
    # start again from the prompt: the recompute regenerates what was lost
    request.output_token_ids.clear()
    request.all_token_ids = list(request.prompt_token_ids)
    request.metrics.num_output_tokens = 0
    request.num_computed_tokens = 0
    self.waiting.appendleft(request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
