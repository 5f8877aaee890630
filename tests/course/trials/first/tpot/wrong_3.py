"""Misconception: the decode phase starts when the request is first scheduled, so TPOT runs
from first_scheduled_time. Wrong whenever the prefill takes time: scheduled=1.0, first=1.5,
finish=2.5, 3 tokens gives 0.75, not 0.5."""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's
    metrics ``self`` (timestamps in seconds: ``self.first_token_time``,
    ``self.finish_time``; ``self.num_output_tokens``). A one-token answer has no
    later tokens: its TPOT is 0.
    """
    later = self.num_output_tokens - 1
    if later <= 0:
        return 0.0
    start = self.first_scheduled_time
    if start is None:
        start = self.first_token_time
    return (self.finish_time - start) / later
