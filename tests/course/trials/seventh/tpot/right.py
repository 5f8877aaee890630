"""Right: counts the later tokens first, clamped at zero (so an answer with no token at
all and a one-token answer both have 0 intervals), returns 0.0 explicitly when there
is nothing to divide, with an `is None` test for the missing first token rather than
relying on the count going negative; else the span from first token to finish over
that count.
"""


def tpot(self) -> float:
    later_tokens = max(self.num_output_tokens - 1, 0)
    if later_tokens == 0 or self.first_token_time is None:
        return 0.0
    span = self.finish_time - self.first_token_time
    return span / later_tokens
