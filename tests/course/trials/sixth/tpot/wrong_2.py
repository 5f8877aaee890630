"""Misconception: a one-token answer finishes the moment its first token comes, so guarding the
divisor with max(n - 1, 1) already gives 0. Only if finish_time == first_token_time: n=1 with first
1.0 s, finish 1.5 s gives 0.5 instead of 0 (and n=0, first_token_time None, raises TypeError)."""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's metrics."""
    return (self.finish_time - self.first_token_time) / max(self.num_output_tokens - 1, 1)
