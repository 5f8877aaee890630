"""Misconception: "recomputation" means starting over: the generated tokens go with the KV and
the answer is generated again from the prompt. Greedy outputs end the same, but the tokens it
had are lost (output_token_ids emptied, all_token_ids cut to the prompt) and streamed twice."""


def preempt(self, request):
    """Preempt ``request`` by recomputation (see the stub's contract)."""
    self.running.remove(request)
    self.kv.free(request)
    request.num_computed_tokens = 0
    # start the answer again from the prompt
    del request.all_token_ids[len(request.prompt_token_ids):]
    request.output_token_ids.clear()
    self.waiting.appendleft(request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
