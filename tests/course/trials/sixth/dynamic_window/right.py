"""Right, but phrased as "is the window still open?": it stays open only while the queue is
short of a batch and no waiting request at all (checked one by one, not via the minimum) has
waited max_wait_ms; the clock is read once."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else the batch stage 2 would cut."""
    waiting = self.waiting
    if len(waiting) == 0:
        return []
    now = self.clock()
    limit_ms = self.config.max_wait_ms
    still_open = (len(waiting) < self.config.max_batch_size
                  and not any((now - request.metrics.arrival_time) * 1000 >= limit_ms
                              for request in waiting))
    return [] if still_open else StaticEngine.next_batch(self)
