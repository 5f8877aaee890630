"""Misconception: "all or none" is judged against the step's size (max_num_batched_tokens),
not against what is left of it (budget). Goes wrong without chunking: fit(10, 5) with
max_num_batched_tokens=16 gives 10 here (the step would carry 11 + 10 > 16); it must be 0."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    if self.config.enable_chunked_prefill:
        return min(remaining, budget)
    if remaining <= self.config.max_num_batched_tokens:
        return remaining          # it fits a step: all of it
    return min(remaining, budget)  # it never fits: a chunk
