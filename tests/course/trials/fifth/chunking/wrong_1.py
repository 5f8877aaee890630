"""Misconception: a request longer than any step runs only when it has a whole step to
itself (budget == max_num_batched_tokens), taking a full step's worth; otherwise it
waits. Wrong without chunking for remaining=40 > max 16 with budget=10: gives 0, not 10."""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step."""
    step = self.config.max_num_batched_tokens
    if self.config.enable_chunked_prefill:
        return min(remaining, budget)
    if remaining <= budget:
        return remaining
    if remaining > step and budget == step:      # an empty step: give it all of it
        return step
    return 0
