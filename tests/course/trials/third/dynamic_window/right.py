"""Right, full-first with an early exit: a full queue closes the window without reading the clock;
otherwise the oldest is the minimum arrival time over the whole queue (not the head, which bucketing
may have reordered), and the window stays open while its wait in ms is below max_wait_ms."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else StaticEngine.next_batch(self)."""
    queue = self.waiting
    if not queue:
        return []
    if len(queue) < self.config.max_batch_size:
        oldest = min(request.metrics.arrival_time for request in queue)
        if (self.clock() - oldest) * 1000.0 < self.config.max_wait_ms:
            return []
    return StaticEngine.next_batch(self)
