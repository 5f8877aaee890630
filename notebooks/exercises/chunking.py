"""Chapter 6: chunked prefill.

How many of a request's remaining tokens run this step. Check:
``python -m minicb check chunking`` (chunked prefill on, 16 tokens a step).
"""


def fit(self, remaining: int, budget: int) -> int:
    """``remaining``: the request's tokens not yet computed; ``budget``: tokens
    left in this step.

    - With ``self.config.enable_chunked_prefill``, or when ``remaining`` is more
      than a whole step holds (``self.config.max_num_batched_tokens``), run as many
      as the budget allows: a chunk.
    - Otherwise all of them if they fit the budget, else none (0) this step.
    """
    raise NotImplementedError
