"""Misconception: chunks should end on KV block boundaries, so a partial chunk is rounded down to
whole blocks (block_size 16). Chunked, remaining 40, budget 30: returns 16, should be 30.
"""


def fit(self, remaining: int, budget: int) -> int:
    """How many of ``remaining`` uncomputed tokens run this step."""
    cfg = self.config
    if remaining <= budget:
        return remaining
    if not cfg.enable_chunked_prefill and remaining <= cfg.max_num_batched_tokens:
        return 0
    chunk = max(budget, 0)
    # Whole blocks only, when at least one fits, so no block is left half written.
    if chunk >= cfg.block_size:
        chunk -= chunk % cfg.block_size
    return chunk
