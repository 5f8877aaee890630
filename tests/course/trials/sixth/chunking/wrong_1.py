"""Misconception: a request too long for any step is cut into chunks of a whole step's
size (max_num_batched_tokens), ignoring what is left of this step's budget. Without
chunking, remaining 40, budget 10, max 16 gives 16 (overfilling the step) instead of 10.
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
    if self.config.enable_chunked_prefill:
        return budget
    if remaining > self.config.max_num_batched_tokens:
        return self.config.max_num_batched_tokens   # chunks the size of a step
    return 0
