"""Misconception: a one-token answer finishes at its first token, so the formula already
gives 0 and max(n - 1, 1) only guards the division. Wrong when its finish is later (aborted
after its first token): n=1, first_token_time 1.0, finish_time 3.0 gives 2.0 instead of 0."""


def tpot(self) -> float:
    if self.first_token_time is None:
        return 0.0
    return (self.finish_time - self.first_token_time) / max(self.num_output_tokens - 1, 1)
