"""Misconception: whatever does not fit the step's leftover budget is cut to fit, so the
chunked-prefill flag need not be read. Right with chunking on; without it, fit(10, 5) with
max_num_batched_tokens=16 must be 0 (all or none), here it is 5."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    if remaining <= budget:
        return remaining
    return max(budget, 0)
