"""Misconception: the queue is in arrival order, so the oldest request is ``self.waiting[0]``. But
bucket_by_length sorts the queue (and a failed step puts its batch back at the head), so the head
need not be the oldest. Goes wrong: bucketing, queue [new (max_tokens 1), old (max_tokens 9)] -> window stays open."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else StaticEngine.next_batch(self)."""
    if not self.waiting:
        return []
    if len(self.waiting) >= self.config.max_batch_size:
        return StaticEngine.next_batch(self)
    waited = self.clock() - self.waiting[0].metrics.arrival_time
    if waited * 1000 >= self.config.max_wait_ms:
        return StaticEngine.next_batch(self)
    return []
