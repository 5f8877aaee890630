"""Misconception: "time per output token" spreads the decode time over every output
token, the first included (n tokens, so divide by n). Between the first token and the
last there are only n - 1 further tokens, and TPOT is the time each of those took.
Input: first_token_time 1.0, finish_time 1.3, num_output_tokens 4 -> 0.1 s required;
this returns 0.075 s.
"""


def tpot(self) -> float:
    if self.first_token_time is None or self.num_output_tokens == 0:
        return 0.0
    return (self.finish_time - self.first_token_time) / self.num_output_tokens
