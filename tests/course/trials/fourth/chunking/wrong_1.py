"""Misconception: a request too long for any step gets "a step's worth", max_num_batched_tokens,
whatever the running decodes already took, so the step overflows its budget. Agrees when the
step is empty; chunked off, max 16, fit(40, budget=10) gives 16 instead of 10."""


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
    limit = self.config.max_num_batched_tokens
    if remaining > limit:
        return limit        # it can never fit whole: give it a full step
    return 0
