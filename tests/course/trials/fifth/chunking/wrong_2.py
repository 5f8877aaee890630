"""Misconception: a request longer than any step is cut into chunks of one step's size
(max_num_batched_tokens), whatever is left of this step's budget. Wrong without
chunking for remaining=40 > max 16 with budget=10: gives 16, over the budget."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step."""
    step = self.config.max_num_batched_tokens
    if self.config.enable_chunked_prefill:
        return min(remaining, budget)
    if remaining > step:                         # too long for any step: one step's worth
        return step
    return remaining if remaining <= budget else 0
