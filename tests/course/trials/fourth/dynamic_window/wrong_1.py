"""Misconception: the queue is in arrival order, so its head is the oldest request. Not after
bucket_by_length sorted it (or a failed batch was put back at the head): a young head hides an
old request behind it, e.g. waiting [young (arrived now), old (arrived 1 s ago)] stays open."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        return []
    if len(self.waiting) >= self.config.max_batch_size:
        return StaticEngine.next_batch(self)
    waited_ms = (self.clock() - self.waiting[0].metrics.arrival_time) * 1000.0
    if waited_ms >= self.config.max_wait_ms:
        return StaticEngine.next_batch(self)
    return []
