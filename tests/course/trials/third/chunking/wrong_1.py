"""Misconception: a request "as large as a step" already counts as one no step holds, so it may
be cut (>= instead of >). Without chunking, remaining == max_num_batched_tokens = 16, budget 10: returns 10, should be 0.
"""


def fit(self, remaining: int, budget: int) -> int:
    """How many of ``remaining`` uncomputed tokens run this step."""
    if remaining <= budget:
        return remaining
    if self.config.enable_chunked_prefill:
        return budget
    # Too big for a step: it must be cut, or it would wait forever.
    if remaining >= self.config.max_num_batched_tokens:
        return budget
    return 0
