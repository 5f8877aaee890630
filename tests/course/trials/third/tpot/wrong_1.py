"""Misconception: time per output token divides the decode span by *all* output tokens (the span
from first to last token covers n - 1 gaps, not n). One-token answers still give 0.
Goes wrong: first_token_time 1.0, finish_time 1.3, 4 tokens -> 0.075 instead of 0.1."""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's metrics."""
    if self.num_output_tokens <= 1:
        return 0.0
    return (self.finish_time - self.first_token_time) / self.num_output_tokens
