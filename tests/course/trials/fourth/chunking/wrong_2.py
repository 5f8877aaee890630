"""Misconception: "must still run" means the oversized request runs whole, once, in a step of its
own (when nothing else took any budget), going over the limit that one time; otherwise it waits.
Chunked off, max 16: fit(40, budget=16) gives 40 instead of 16, fit(40, budget=10) gives 0, not 10."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    limit = self.config.max_num_batched_tokens
    if remaining <= budget:
        return remaining
    if self.config.enable_chunked_prefill:
        return budget
    if remaining > limit and budget == limit:
        return remaining    # alone in the step: let it through whole
    return 0
