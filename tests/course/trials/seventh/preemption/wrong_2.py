"""Misconception: "recomputation" means the request starts over: its output so far is
thrown away with its K/V, and it is generated again from the prompt. The contract keeps
every token it has; only the K/V are recomputed (prompt and output in one prefill), and
decoding continues where it stopped. Input: a request with prompt [1, 2] and output
[7, 8] is preempted -> its all_token_ids must stay [1, 2, 7, 8]; this leaves [1, 2] and
an empty output (a sampled request then draws different tokens, and every request
redoes its steps).
"""


def preempt(self, request):
    self.running.remove(request)
    self.kv.free(request)
    request.output_token_ids.clear()
    request.all_token_ids[:] = request.prompt_token_ids
    request.metrics.num_output_tokens = 0
    request.num_computed_tokens = 0
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
    self.waiting.appendleft(request)
