"""Misconception: sorting only decides who goes in the batch; the queue itself can stay in
arrival order. The batch is right, but self.waiting is left unsorted: waiting max_tokens
[9, 1, 5, 3] with batch size 2 leaves [9, 5] instead of [5, 9]."""
from collections import deque


def next_batch(self) -> list:
    n = min(self.config.max_batch_size, len(self.waiting))
    if not self.config.bucket_by_length:
        return [self.waiting.popleft() for _ in range(n)]
    chosen = sorted(self.waiting, key=lambda r: r.params.max_tokens)[:n]
    taken = set(map(id, chosen))
    self.waiting = deque(r for r in self.waiting if id(r) not in taken)
    return chosen
