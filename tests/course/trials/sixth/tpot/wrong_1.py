"""Misconception: "time per output token" divides the decode time by every output token, the first
included. Goes wrong for any answer of more than one token: first 1.0 s, finish 2.0 s, 5 tokens
gives 0.2 s instead of 0.25 s."""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's metrics."""
    if self.num_output_tokens <= 1:
        return 0.0
    return (self.finish_time - self.first_token_time) / self.num_output_tokens
