"""Misconception: the queue is in arrival order, so its head is the oldest request and
its wait alone decides the timeout. It is not always: with bucket_by_length, stage 2's
cut leaves the queue sorted by max_tokens (and a failed step puts its batch back at the
head), so an older request can sit behind a newer one. Input: max_batch_size=8,
max_wait_ms=50, waiting [B (arrived 0.10 s), A (arrived 0.00 s)], clock 0.12 s -> A has
waited 120 ms, so the window is closed and a batch is cut; this looks at B (20 ms) and
returns [].
"""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        return []
    if len(self.waiting) >= self.config.max_batch_size:
        return StaticEngine.next_batch(self)
    waited_ms = (self.clock() - self.waiting[0].metrics.arrival_time) * 1e3
    if waited_ms >= self.config.max_wait_ms:
        return StaticEngine.next_batch(self)
    return []
