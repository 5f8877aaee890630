"""Right, by counting gaps: the later tokens are range(1, num_output_tokens); with none (one token,
or none at all) TPOT is 0.0 and no timestamp is read, else the first-to-finish span over their count."""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's metrics."""
    later_tokens = range(1, self.num_output_tokens)
    if not later_tokens:
        return 0.0
    return (self.finish_time - self.first_token_time) / len(later_tokens)
