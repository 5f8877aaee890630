"""Chapter 6: chunked prefill.

How many of a request's remaining tokens run this step. Check:
``python -m minicb check chunking`` (chunked prefill on, 16 tokens a step).
"""


def fit(self, remaining: int, budget: int) -> int:
    """How many of a request's ``remaining`` uncomputed tokens run this step,
    with ``budget`` tokens left in it. With chunked prefill
    (``self.config.enable_chunked_prefill``) a request may run part of them;
    without it, all or none. No request may wait forever: one with more tokens
    than any step holds (``self.config.max_num_batched_tokens``) must still run.
    """
    raise NotImplementedError
