"""Misconception: any sequence will do for the queue, so the sorted queue is kept as a list and
cut by slicing. Batches are right, but self.waiting stops being a deque: the next requeue after a
step raises (waiting.appendleft) fails with AttributeError."""
from collections import deque


def next_batch(self) -> list:
    """The next batch, up to max_batch_size requests from the front of self.waiting."""
    size = self.config.max_batch_size
    if self.config.bucket_by_length:
        queue = sorted(self.waiting, key=lambda request: request.params.max_tokens)
        batch, self.waiting = queue[:size], queue[size:]
        return batch
    return [self.waiting.popleft() for _ in range(min(size, len(self.waiting)))]
