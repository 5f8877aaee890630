"""Misconception: "no first token" can be tested by truthiness (if not
first_token_time). A timestamp of 0.0 is a real time: on a virtual clock that starts at
0 a request can get its first token at 0.0 s, and this then reports a TPOT of 0 for a
long answer. Input: first_token_time 0.0, finish_time 0.3, num_output_tokens 4 ->
0.1 s required; this returns 0.0.
"""


def tpot(self) -> float:
    if not self.first_token_time or self.num_output_tokens < 2:
        return 0.0
    return (self.finish_time - self.first_token_time) / (self.num_output_tokens - 1)
