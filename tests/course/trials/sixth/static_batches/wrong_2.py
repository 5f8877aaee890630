"""Misconception: request ids are handed out in arrival order, so (max_tokens, request_id) sorts
ties by arrival. The ids are strings: "10" sorts before "9", so with ten or more requests of equal
max_tokens (ids "0".."11"), requests 10 and 11 jump ahead of 2..9."""
from collections import deque


def next_batch(self) -> list:
    """The next batch, up to max_batch_size requests from the front of self.waiting."""
    if self.config.bucket_by_length:
        self.waiting = deque(sorted(
            self.waiting, key=lambda request: (request.params.max_tokens, request.request_id)))
    size = min(len(self.waiting), self.config.max_batch_size)
    return [self.waiting.popleft() for _ in range(size)]
