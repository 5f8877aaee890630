"""Misconception: like ttft, a request with no later tokens has no TPOT, so it is None.
The contract says 0: a one-token answer (num_output_tokens=1) returns None, not 0."""


def tpot(self) -> float:
    if self.num_output_tokens < 2:
        return None
    return (self.finish_time - self.first_token_time) / (self.num_output_tokens - 1)
