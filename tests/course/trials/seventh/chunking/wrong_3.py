"""Misconception: "a request with more tokens than the step holds must still run" is
read as "more tokens than are left in *this* step", so even without chunked prefill a
request that does not fit what is left is cut to fit. The rule is about
max_num_batched_tokens, a whole step: without chunking, a request that would fit an
empty step waits for one (all or none). Input: chunking off,
max_num_batched_tokens 16, remaining 10, budget 5 -> 0 required; this returns 5.
"""


def fit(self, remaining: int, budget: int) -> int:
    if self.config.enable_chunked_prefill or remaining > budget:
        return min(remaining, budget)
    return remaining
