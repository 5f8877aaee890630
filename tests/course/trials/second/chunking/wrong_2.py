"""Misconception: without chunking, a request too big for any step runs a full step's worth,
max_num_batched_tokens, whatever is left of this step. Exceeds the budget beside other work:
max 16, chunking off, fit(20, 5) gives 16, not 5.
"""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    if self.config.enable_chunked_prefill:
        return min(remaining, budget)
    step = self.config.max_num_batched_tokens
    if remaining > step:                       # could never fit whole: run a step's worth
        return step
    return remaining if remaining <= budget else 0
