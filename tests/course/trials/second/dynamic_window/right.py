"""Right, without finding the oldest: a full queue closes the window before the clock is
read at all; otherwise it closes if any waiting request has waited max_wait_ms (the same
as the oldest having waited that long, since waiting time falls as arrival time rises)."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    waiting = self.waiting
    if len(waiting) == 0:
        return []
    if len(waiting) < self.config.max_batch_size:
        now = self.clock()
        if not any((now - request.metrics.arrival_time) * 1e3 >= self.config.max_wait_ms
                   for request in waiting):
            return []
    return StaticEngine.next_batch(self)
