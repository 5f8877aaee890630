"""Correct. Differs from the obvious "self.waiting = deque(sorted(...)); popleft() n
times": ranks queue positions by (max_tokens, position), which is stable by
construction, and refills the *same* deque object in place with what is left.
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
    queue = list(self.waiting)
    if self.config.bucket_by_length:
        ranks = sorted(range(len(queue)),
                       key=lambda i: (queue[i].params.max_tokens, i))
        queue = [queue[i] for i in ranks]
    size = max(0, self.config.max_batch_size)
    batch, rest = queue[:size], queue[size:]
    self.waiting.clear()
    self.waiting.extend(rest)
    return batch
