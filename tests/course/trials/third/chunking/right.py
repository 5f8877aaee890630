"""Right: decides first whether a partial run is allowed at all (chunked prefill, or more
tokens than any step holds), then clips once with min/max; no early returns.
"""


def fit(self, remaining: int, budget: int) -> int:
    """How many of ``remaining`` uncomputed tokens run this step, ``budget`` left in it."""
    cfg = self.config
    may_split = cfg.enable_chunked_prefill or remaining > cfg.max_num_batched_tokens
    whole = remaining <= budget
    # A part is the most that fits; all-or-none gives everything or nothing.
    allowed = max(0, min(remaining, budget)) if (may_split or whole) else 0
    return allowed
