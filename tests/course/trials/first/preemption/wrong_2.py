"""Misconception: recomputation means starting the request over: its output so far is dropped
with its K/V and generated again. Under greedy sampling the final text is the same, but a
request preempted after 5 of 8 tokens takes 5 extra decode steps (and a seeded sampler differs)."""


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
    # back to its prompt: it is recomputed from scratch
    request.output_token_ids.clear()
    request.all_token_ids = list(request.prompt_token_ids)
    request.metrics.num_output_tokens = 0
    request.num_computed_tokens = 0
    self.waiting.appendleft(request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
