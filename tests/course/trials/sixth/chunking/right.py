"""Right: takes the most the step can carry first, then asks whether a part is allowed:
a part is fine with chunked prefill or for a request larger than any step; otherwise a
part that is not the whole becomes 0.
"""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    n = min(remaining, budget)
    if n == remaining:
        return n                                   # the whole fits: always allowed
    may_split = (self.config.enable_chunked_prefill
                 or remaining > self.config.max_num_batched_tokens)
    return n if may_split else 0
