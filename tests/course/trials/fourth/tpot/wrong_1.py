"""Misconception: TPOT is the decode time spread over every output token, so divide by
num_output_tokens. Too small by a factor (n-1)/n: first 1.0 s, finish 2.0 s, 3 tokens
gives 0.333 s instead of 0.5 s."""


def tpot(self) -> float:
    n = self.num_output_tokens
    if n <= 1:
        return 0.0
    return (self.finish_time - self.first_token_time) / n
