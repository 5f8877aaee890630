"""Misconception: bucketing by length means sorting the requests *within* the batch:
cut the next max_batch_size requests in arrival order, then order them shortest first.
The contract sorts the whole queue first, so the batch is the shortest requests waiting
and the rest of the queue is left sorted. Input: bucket_by_length on,
max_batch_size=2, waiting max_tokens [100, 5, 5] -> the batch must be the two
5-token requests; this returns the 100-token request and the first 5-token one.
"""
from collections import deque


def next_batch(self) -> list:
    size = min(len(self.waiting), self.config.max_batch_size)
    batch = [self.waiting.popleft() for _ in range(size)]
    if self.config.bucket_by_length:
        batch.sort(key=lambda r: r.params.max_tokens)
    return batch
