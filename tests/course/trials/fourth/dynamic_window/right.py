"""Right, but without finding the oldest request: the window is closed when the queue is
full or when *any* waiting request has waited max_wait_ms (the same test, since waiting time
only grows with age); the clock is read once, and only when the queue is not full."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    waiting = self.waiting
    if len(waiting) == 0:
        return []
    if len(waiting) < self.config.max_batch_size:
        now = self.clock()
        if not any((now - r.metrics.arrival_time) * 1000.0 >= self.config.max_wait_ms
                   for r in waiting):
            return []                      # window still open
    return StaticEngine.next_batch(self)
