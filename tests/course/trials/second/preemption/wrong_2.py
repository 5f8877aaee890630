"""Misconception: recomputation means starting the request over, so its output so far is dropped and
generated again. Greedy runs end with the same tokens, but the stream repeats them (and a seeded sampled
request draws different ones): a request preempted after 5 outputs streams those 5 twice.
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
    # Recompute from scratch: back to the prompt alone.
    request.num_computed_tokens = 0
    del request.all_token_ids[len(request.prompt_token_ids):]
    request.output_token_ids.clear()
    self.waiting.appendleft(request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
