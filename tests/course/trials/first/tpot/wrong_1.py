"""Misconception: "per output token" means dividing the span by every output token.
Goes wrong for any answer of 2+ tokens: first=1.0, finish=2.0, 3 tokens gives 1/3 s, not 0.5 s."""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's
    metrics ``self`` (timestamps in seconds: ``self.first_token_time``,
    ``self.finish_time``; ``self.num_output_tokens``). A one-token answer has no
    later tokens: its TPOT is 0.
    """
    if self.num_output_tokens <= 1:
        return 0.0
    return (self.finish_time - self.first_token_time) / self.num_output_tokens
