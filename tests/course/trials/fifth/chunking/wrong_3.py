"""Misconception: "all or none" without chunking asks whether the tokens fit in a step
(max_num_batched_tokens), not in what is left of this one. Wrong for remaining=12,
budget=5, max 16, chunking off: gives 12 (over the budget), not 0."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step."""
    step = self.config.max_num_batched_tokens
    if self.config.enable_chunked_prefill or remaining > step:
        return min(remaining, budget)
    return remaining if remaining <= step else 0
