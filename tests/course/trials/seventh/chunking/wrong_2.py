"""Misconception: a request larger than any step gets a full step's worth of its tokens
(max_num_batched_tokens) each time, as a chunk "the size of a step". But the step may
already carry other tokens: the chunk must fit what is left of it, budget. Input:
chunking off, max_num_batched_tokens 16, remaining 20, budget 10 (decodes took 6) ->
10 required; this returns 16 and the step carries 22 tokens.
"""


def fit(self, remaining: int, budget: int) -> int:
    limit = self.config.max_num_batched_tokens
    if remaining > limit:
        return limit
    if self.config.enable_chunked_prefill:
        return min(remaining, budget)
    return remaining if remaining <= budget else 0
