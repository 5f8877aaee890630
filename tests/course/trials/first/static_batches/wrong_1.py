"""Misconception: bucketing sorts the batch, not the queue: take the first
max_batch_size arrivals, then order them by max_tokens. Wrong on max_tokens
[100, 1, 100, 1] with batches of 2: gives the two 100s' batch first, not the two 1s.
"""
from collections import deque


def next_batch(self) -> list:
    """The next batch of up to max_batch_size requests from the front of self.waiting."""
    batch = []
    while self.waiting and len(batch) < self.config.max_batch_size:
        batch.append(self.waiting.popleft())
    if self.config.bucket_by_length:
        batch.sort(key=lambda r: r.params.max_tokens)
    return batch
