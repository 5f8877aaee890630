"""Misconception: guard the division with max(n - 1, 1) and trust the span to be 0 for one token.
Right whenever a one-token request finishes on the step of its token; wrong when it ends later
(e.g. aborted after its first token): first=1.0, finish=3.0, 1 token gives 2.0, not 0."""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's
    metrics ``self`` (timestamps in seconds: ``self.first_token_time``,
    ``self.finish_time``; ``self.num_output_tokens``). A one-token answer has no
    later tokens: its TPOT is 0.
    """
    if self.first_token_time is None:
        return 0.0
    return (self.finish_time - self.first_token_time) / max(self.num_output_tokens - 1, 1)
