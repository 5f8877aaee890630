"""Misconception: ties in max_tokens need a deterministic tie-break, so the sort key is
(max_tokens, request_id). Ids are strings: with ten or more requests "10" sorts before "9",
so an equal-length later arrival jumps ahead of an earlier one (ties must keep arrival order)."""
from collections import deque


def next_batch(self) -> list:
    if self.config.bucket_by_length:
        self.waiting = deque(sorted(self.waiting,
                                    key=lambda r: (r.params.max_tokens, r.request_id)))
    batch = []
    while self.waiting and len(batch) < self.config.max_batch_size:
        batch.append(self.waiting.popleft())
    return batch
