"""Misconception: "must still run" means an oversized request runs whole, in one step, past the
token budget. Goes wrong without chunking: fit(40, 32) with max_num_batched_tokens=32 gives 40
here (the step overruns its budget); it must run in chunks: 32."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    if self.config.enable_chunked_prefill:
        return min(remaining, budget)
    if remaining > self.config.max_num_batched_tokens:
        # it can never fit a step, so it gets to run anyway
        return remaining if budget > 0 else 0
    return remaining if remaining <= budget else 0
