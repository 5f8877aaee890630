"""Misconception: bucketing sorts the batch, not the queue: take the first max_batch_size
requests in arrival order, then order them by max_tokens. Wrong as soon as more requests
wait than fit: max_batch_size=2, max_tokens [50, 50, 1] should give [third, first]."""
from collections import deque


def next_batch(self) -> list:
    batch = []
    while self.waiting and len(batch) < self.config.max_batch_size:
        batch.append(self.waiting.popleft())
    if self.config.bucket_by_length:
        batch.sort(key=lambda request: request.params.max_tokens)
    return batch
