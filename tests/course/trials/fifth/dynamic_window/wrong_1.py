"""Misconception: the queue is in arrival order, so its head is the oldest request. After a
bucket_by_length cut the queue is sorted by max_tokens: queue [B (arrived 0.01), A (arrived
0.00)], max_wait_ms 50, at 0.055 it returns [] though A has waited 55 ms."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        return []
    if len(self.waiting) >= self.config.max_batch_size:
        return StaticEngine.next_batch(self)
    waited = self.clock() - self.waiting[0].metrics.arrival_time
    if waited >= self.config.max_wait_ms / 1000:
        return StaticEngine.next_batch(self)
    return []
