"""Misconception: "per output token" divides by every output token, the first included.
first_token_time 1.0, finish_time 2.0, 5 tokens gives 0.2 instead of 0.25 (it is right only
in the limit of long answers)."""


def tpot(self) -> float:
    if self.num_output_tokens <= 1:
        return 0.0
    return (self.finish_time - self.first_token_time) / self.num_output_tokens
