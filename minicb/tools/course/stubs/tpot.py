"""Chapter 3: time per output token.

Dynamic batching trades time to first token for bigger batches; TPOT says what
each later token costs. Check: ``python -m minicb check tpot``.
"""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's
    metrics ``self`` (timestamps in seconds: ``self.first_token_time``,
    ``self.finish_time``; ``self.num_output_tokens``). A one-token answer has no
    later tokens: its TPOT is 0.
    """
    raise NotImplementedError
