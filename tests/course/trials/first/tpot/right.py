"""Correct, written differently: the span is taken with math.fsum (the same correctly
rounded difference) and the one-token case falls out of a ZeroDivisionError handler rather
than an explicit n == 1 test; zero-token (aborted early) requests also give 0."""
import math


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's
    metrics ``self`` (timestamps in seconds: ``self.first_token_time``,
    ``self.finish_time``; ``self.num_output_tokens``). A one-token answer has no
    later tokens: its TPOT is 0.
    """
    gaps = self.num_output_tokens - 1          # intervals between consecutive tokens
    if gaps < 0 or self.first_token_time is None:
        return 0.0
    try:
        return math.fsum((self.finish_time, -self.first_token_time)) / gaps
    except ZeroDivisionError:                  # one token: no interval after the first
        return 0.0
