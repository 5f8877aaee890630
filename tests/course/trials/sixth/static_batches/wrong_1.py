"""Misconception: bucketing sorts the batch being cut, not the queue: the first max_batch_size
requests in arrival order are taken, then ordered by max_tokens. Goes wrong with more waiting
than a batch holds: max_batch_size 2, max_tokens [50, 40, 1] gives [40, 50] instead of [1, 40]."""
from collections import deque


def next_batch(self) -> list:
    """The next batch, up to max_batch_size requests from the front of self.waiting."""
    size = min(len(self.waiting), self.config.max_batch_size)
    batch = [self.waiting.popleft() for _ in range(size)]
    if self.config.bucket_by_length:
        batch.sort(key=lambda request: request.params.max_tokens)
    return batch
