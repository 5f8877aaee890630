"""Misconception: request ids count up in arrival order, so ties are broken by (max_tokens,
request_id); but ids are strings (and callers may choose them), so "10" sorts before "9".
Goes wrong: bucket_by_length, ten requests with ids "0".."10" of equal max_tokens -> "10" jumps ahead of "2".."9"."""
from collections import deque


def next_batch(self) -> list:
    """The next batch of up to max_batch_size requests from the front of self.waiting."""
    if self.config.bucket_by_length:
        ordered = sorted(self.waiting, key=lambda r: (r.params.max_tokens, r.request_id))
        self.waiting.clear()
        self.waiting.extend(ordered)
    batch = []
    while self.waiting and len(batch) < self.config.max_batch_size:
        batch.append(self.waiting.popleft())
    return batch
