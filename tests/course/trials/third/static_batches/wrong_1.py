"""Misconception: bucketing means sorting *within* the batch being cut, so the batch is still the
first max_batch_size arrivals, just reordered shortest first.
Goes wrong: bucket_by_length, batch size 2, queue max_tokens [30, 30, 1, 1] -> batch of the two 30s, not the two 1s."""
from collections import deque


def next_batch(self) -> list:
    """The next batch of up to max_batch_size requests from the front of self.waiting."""
    size = min(self.config.max_batch_size, len(self.waiting))
    batch = [self.waiting.popleft() for _ in range(size)]
    if self.config.bucket_by_length:
        batch.sort(key=lambda r: r.params.max_tokens)
    return batch
