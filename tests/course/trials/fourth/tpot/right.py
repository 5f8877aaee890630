"""Right, written as the mean of the gaps between tokens (the span after the first token
shared out over the other tokens), with the no-later-tokens case folded into the divisor
check instead of an early return."""


def tpot(self) -> float:
    later_tokens = self.num_output_tokens - 1
    span = 0.0 if later_tokens < 1 else self.finish_time - self.first_token_time
    return span / later_tokens if later_tokens >= 1 else 0.0
