"""Right: counts the gaps between output tokens (tokens - 1) and returns 0.0 when there is
none, before touching a timestamp (so a request with no first token never subtracts None);
the obvious version tests num_output_tokens <= 1 and divides in one expression."""


def tpot(self) -> float:
    gaps = self.num_output_tokens - 1
    if gaps < 1:
        return 0.0
    return (self.finish_time - self.first_token_time) / gaps
