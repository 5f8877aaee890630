"""Chapter 2: cutting static batches (with custom batching).

Stage 2 runs one batch to completion, then takes the next one from the queue.
Check: ``python -m minicb check static_batches`` (it runs with bucket_by_length on).
"""
from collections import deque


def next_batch(self) -> list:
    """The next batch: up to ``self.config.max_batch_size`` requests taken from
    the front of ``self.waiting`` (a deque, in arrival order), removed from it.

    With ``self.config.bucket_by_length``, first sort the whole queue by each
    request's expected output length, ``request.params.max_tokens`` (shortest
    first, ties keeping arrival order), so requests that finish together share a
    batch. Keep ``self.waiting`` a deque.
    """
    raise NotImplementedError
