"""Right, phrased as decode time over decode steps: it counts the later tokens first and
returns 0.0 whenever there are none (n of 0 or 1), before any timestamp is read."""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's metrics."""
    later_tokens = max(self.num_output_tokens - 1, 0)
    if not later_tokens:
        return 0.0
    decode_seconds = self.finish_time - self.first_token_time
    return decode_seconds / later_tokens
