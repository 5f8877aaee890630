"""Misconception: guarding the division with max(n - 1, 1) is enough for one-token answers, because
their finish time equals their first token's time. Not when a one-token request finishes later
(aborted after its first token): first_token_time 1.0, finish_time 1.5, 1 token -> 0.5 instead of 0."""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's metrics."""
    if self.first_token_time is None:
        return 0.0
    return (self.finish_time - self.first_token_time) / max(self.num_output_tokens - 1, 1)
