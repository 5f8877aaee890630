"""Misconception: the batch is full when exactly max_batch_size wait, tested with ==. When more
than that wait at once (a burst, or a queue that grew during a long batch), the window stays open
until the timeout: max_batch_size 2, three fresh requests waiting gives []."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else the batch stage 2 would cut."""
    if not self.waiting:
        return []
    oldest = min(request.metrics.arrival_time for request in self.waiting)
    waited_ms = (self.clock() - oldest) * 1000
    if len(self.waiting) == self.config.max_batch_size or waited_ms >= self.config.max_wait_ms:
        return StaticEngine.next_batch(self)
    return []
