"""Misconception: sort the queue longest first and take the shortest requests from its
right end with pop(). A stable descending sort keeps equal lengths in arrival order, so
popping from the right takes tied requests newest first, and leaves the queue in the
reverse of the required order; the contract wants ties in arrival order, taken from the
front. Input: bucket_by_length on, max_batch_size=1, waiting A then B, both
max_tokens 8 -> the batch must be [A]; this returns [B].
"""
from collections import deque


def next_batch(self) -> list:
    size = min(len(self.waiting), self.config.max_batch_size)
    if not self.config.bucket_by_length:
        return [self.waiting.popleft() for _ in range(size)]
    self.waiting = deque(sorted(self.waiting, key=lambda r: r.params.max_tokens,
                                reverse=True))
    return [self.waiting.pop() for _ in range(size)]
