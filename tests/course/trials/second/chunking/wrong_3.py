"""Misconception: a request too big for any step gets a step to itself, so it may run a part only when the
step's whole budget is left. Wrong beside other work: max 16, chunking off, fit(20, 10) gives 0, not 10
(it then waits until every other request has finished or stalled).
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
    # Too big for a shared step: it runs alone, in whole-step chunks.
    if remaining > self.config.max_num_batched_tokens and budget == self.config.max_num_batched_tokens:
        return budget
    return 0
