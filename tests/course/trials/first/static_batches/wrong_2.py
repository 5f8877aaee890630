"""Misconception: ties need an explicit tie-break, and request ids count arrivals, so
sort by (max_tokens, request_id). Ids are strings ("10" < "9") and may be the user's:
ids "9", "10" with equal max_tokens and batches of 1 give "10" first.
"""
from collections import deque


def next_batch(self) -> list:
    """The next batch of up to max_batch_size requests from the front of self.waiting."""
    if self.config.bucket_by_length:
        self.waiting = deque(sorted(self.waiting,
                                    key=lambda r: (r.params.max_tokens, r.request_id)))
    batch = []
    while self.waiting and len(batch) < self.config.max_batch_size:
        batch.append(self.waiting.popleft())
    return batch
