"""Misconception: ties must be broken explicitly by arrival, and request_id is the arrival
counter. Ids are strings ("10" < "9"), so requests "9" and "10" with equal max_tokens come
out "10" first, against arrival order."""
from collections import deque


def next_batch(self) -> list:
    if self.config.bucket_by_length:
        self.waiting = deque(sorted(
            self.waiting, key=lambda r: (r.params.max_tokens, r.request_id)))
    n = min(self.config.max_batch_size, len(self.waiting))
    return [self.waiting.popleft() for _ in range(n)]
