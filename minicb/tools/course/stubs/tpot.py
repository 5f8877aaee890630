"""Chapter 3: time per output token.

Dynamic batching trades time to first token for bigger batches; TPOT says what
each later token costs. Check: ``python -m minicb check tpot``.
"""


def tpot(self) -> float:
    """Seconds per output token after the first, for a finished request's
    metrics ``self`` (timestamps in seconds: ``self.first_token_time``,
    ``self.finish_time``; ``self.num_output_tokens``). A request with no later
    tokens has a TPOT of 0: a one-token answer, and one that ended with none at all
    (it failed or was aborted before its first token, so its first_token_time is None).
    """
    raise NotImplementedError
