"""Right: no if/else on the mode: it works out whether the tokens fit and whether they may be
cut (chunked prefill, or longer than any step), and looks the answer up in a table keyed by
(fits, may_cut): all of them, the budget, or 0."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    config = self.config
    may_cut = bool(config.enable_chunked_prefill) or remaining > config.max_num_batched_tokens
    fits = remaining <= budget
    return {(True, True): remaining, (True, False): remaining,
            (False, True): max(budget, 0), (False, False): 0}[fits, may_cut]
