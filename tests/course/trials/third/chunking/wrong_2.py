"""Misconception: a request too big for any step runs a step-sized chunk (max_num_batched_tokens),
whatever the step has left. No chunking, max 16, remaining 40, budget 5 (decodes took 11): returns 16, over the budget.
"""


def fit(self, remaining: int, budget: int) -> int:
    """How many of ``remaining`` uncomputed tokens run this step."""
    cfg = self.config
    if remaining <= budget:
        return remaining
    if cfg.enable_chunked_prefill:
        return max(budget, 0)
    if remaining > cfg.max_num_batched_tokens:
        # No step can hold it: give it a whole step's worth, so it never waits forever.
        return cfg.max_num_batched_tokens if budget > 0 else 0
    return 0
