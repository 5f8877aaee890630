"""Misconception: max(n - 1, 1) is enough to guard the division for a one-token answer.
It is only 0 when that answer's finish_time equals its first_token_time: a one-token request
aborted or failed later (first 1.0 s, finish 1.5 s) gets 0.5 instead of 0."""


def tpot(self) -> float:
    return (self.finish_time - self.first_token_time) / max(self.num_output_tokens - 1, 1)
