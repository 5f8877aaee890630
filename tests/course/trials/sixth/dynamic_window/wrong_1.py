"""Misconception: the queue is in arrival order, so its head is the oldest request. It is not
after bucket_by_length re-sorts the queue (or a requeue): oldest at the back (max_tokens larger),
head new, window open by the head's clock though the oldest has waited max_wait_ms."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else the batch stage 2 would cut."""
    if not self.waiting:
        return []
    full = len(self.waiting) >= self.config.max_batch_size
    waited_ms = (self.clock() - self.waiting[0].metrics.arrival_time) * 1000
    if full or waited_ms >= self.config.max_wait_ms:
        return StaticEngine.next_batch(self)
    return []
