"""Misconception: the sorted queue can stay the list sorted() returns. The batches are
right, but with bucket_by_length self.waiting becomes a list, and later deque calls
(requeue's appendleft after a step raises) fail with AttributeError.
"""
from collections import deque
from itertools import islice


def next_batch(self) -> list:
    """The next batch of up to max_batch_size requests from the front of self.waiting."""
    if self.config.bucket_by_length:
        self.waiting = sorted(self.waiting, key=lambda r: r.params.max_tokens)
    batch = list(islice(self.waiting, self.config.max_batch_size))
    for request in batch:
        self.waiting.remove(request)
    return batch
