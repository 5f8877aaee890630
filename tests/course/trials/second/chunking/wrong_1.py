"""Misconception: without chunked prefill it is simply all or none; a prompt longer than a step is refused at
add_request, so nothing can outgrow a step. A recompute after preemption can: max_num_batched_tokens 16,
chunking off, fit(20, 16) gives 0 (forever), not 16.
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
    return remaining if remaining <= budget else 0
