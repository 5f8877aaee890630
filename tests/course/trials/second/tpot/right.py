"""Right, as the mean gap between tokens: the time after the first token is spread over
the n - 1 gaps between n tokens; with no gap (n <= 1) the answer is 0.0 without reading a
timestamp (first_token_time may be None when no token came)."""


def tpot(self) -> float:
    gaps = self.num_output_tokens - 1
    if gaps <= 0:
        return 0.0
    decode_time = self.finish_time - self.first_token_time
    return decode_time / gaps
