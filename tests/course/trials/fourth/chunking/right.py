"""Right, written differently: it first decides whether the request may be split at all (chunked
prefill on, or too long for any step) and then takes min(remaining, budget) or the all-or-none
choice, clamping a spent budget to 0 rather than testing "fits?" first."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    splittable = (self.config.enable_chunked_prefill
                  or remaining > self.config.max_num_batched_tokens)
    room = max(budget, 0)
    if splittable:
        return min(remaining, room)
    return remaining if remaining <= room else 0
