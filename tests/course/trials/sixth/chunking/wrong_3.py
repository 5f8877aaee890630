"""Misconception: "must still run" means a too-long request runs whole, in a step of its
own (when the budget is untouched), rather than in chunks. Without chunking, remaining
40, budget = max = 16 gives 40, past the step's budget, instead of 16.
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
    if remaining > self.config.max_num_batched_tokens and budget == self.config.max_num_batched_tokens:
        return remaining                             # alone in its step
    return 0
