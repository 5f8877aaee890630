"""Misconception: a request exactly as large as a step "never fits beside anything", so it
is chunked too (>= instead of >). Without chunking, remaining 16 = max, budget 10 gives
10 (a partial prefill) instead of 0 (wait for a step with room for all 16).
"""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    if remaining <= budget:
        return remaining
    if self.config.enable_chunked_prefill or remaining >= self.config.max_num_batched_tokens:
        return budget
    return 0
