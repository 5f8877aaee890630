"""Misconception: the queue is in arrival order, so its front is the oldest request. After
a bucketed cut (bucket_by_length) the rest of the queue is sorted by max_tokens, and the
front may be a young request: the window stays open past the oldest's max_wait_ms.
"""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else StaticEngine.next_batch(self)."""
    if not self.waiting:
        return []
    full = len(self.waiting) >= self.config.max_batch_size
    waited = self.clock() - self.waiting[0].metrics.arrival_time
    if full or waited >= self.config.max_wait_ms / 1000:
        return StaticEngine.next_batch(self)
    return []
