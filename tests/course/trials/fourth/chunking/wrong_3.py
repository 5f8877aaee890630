"""Misconception: a request that needs a whole step (remaining == max_num_batched_tokens) can never
sit beside decodes, so it is treated as oversized and chunked too. The contract says "more than any
step holds": chunked off, max 16, fit(16, budget=10) gives 10 instead of 0 (it waits for a step it fills)."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    if remaining <= budget:
        return remaining
    # chunk when allowed, or when waiting would not help: it needs at least a whole step
    if self.config.enable_chunked_prefill or remaining >= self.config.max_num_batched_tokens:
        return budget
    return 0
