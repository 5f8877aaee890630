"""Misconception: only a one-token answer is special, so the guard tests n == 1. A request that
finished with no token (failed or aborted first: n=0, first_token_time None) raises TypeError
instead of giving 0."""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's metrics."""
    if self.num_output_tokens == 1:
        return 0.0
    return (self.finish_time - self.first_token_time) / (self.num_output_tokens - 1)
