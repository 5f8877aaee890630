"""Right: asks first whether everything fits (then it all runs, chunked or not), and
only otherwise whether the request may be split, chunked prefill or more tokens than
any step holds, in which case it gets the whole budget left; else none.
"""


def fit(self, remaining: int, budget: int) -> int:
    if remaining <= budget:
        return remaining
    may_split = (self.config.enable_chunked_prefill
                 or remaining > self.config.max_num_batched_tokens)
    return budget if may_split else 0
