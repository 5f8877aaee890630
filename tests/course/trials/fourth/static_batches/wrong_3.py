"""Misconception: the queue is just a sequence, so sort it (or copy it) into a list and keep
the rest by slicing: self.waiting becomes a list. Batches are right, but the queue is no longer
a deque: the engine's requeue (appendleft, after a step raises) fails. Any call shows the type."""
from collections import deque


def next_batch(self) -> list:
    queue = list(self.waiting)
    if self.config.bucket_by_length:
        queue.sort(key=lambda request: request.params.max_tokens)
    size = self.config.max_batch_size
    batch, self.waiting = queue[:size], queue[size:]
    return batch
