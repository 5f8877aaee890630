"""Misconception: the one-token rule is only there to avoid dividing by zero, so clamp the
divisor to 1. Equal for n >= 2, but a one-token request that finished after its token
(first 1.0 s, finish 1.5 s, 1 token) gets 0.5 s instead of 0."""


def tpot(self) -> float:
    later_tokens = max(self.num_output_tokens - 1, 1)
    return (self.finish_time - self.first_token_time) / later_tokens
