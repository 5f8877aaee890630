"""Misconception: the queue is in arrival order, so its head is the oldest request. With
bucket_by_length, stage 2 leaves the queue sorted by max_tokens, and the head may be a new
arrival: the window then waits on it while an older request has waited past max_wait_ms."""
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
