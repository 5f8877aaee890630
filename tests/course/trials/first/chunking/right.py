"""Right, written the other way round: it first takes what fits, min(remaining, budget), and
then asks whether a partial take is allowed (chunking on, or a request no step could hold);
only a partial take that is not allowed becomes 0."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    take = min(remaining, budget)
    whole = take == remaining
    may_split = self.config.enable_chunked_prefill or remaining > self.config.max_num_batched_tokens
    return take if whole or may_split else 0
