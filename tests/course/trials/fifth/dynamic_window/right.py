"""Right: finds the oldest waiting request by its arrival_time (min over the queue), not by
its place in the queue, which bucket_by_length re-sorts and a failed step's requeue
reorders; reads the clock once and compares the wait in seconds."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    waiting = self.waiting
    if not waiting:
        return []
    full = len(waiting) >= self.config.max_batch_size
    if not full:
        oldest = min(request.metrics.arrival_time for request in waiting)
        if self.clock() - oldest < self.config.max_wait_ms / 1000:
            return []                      # the window is still open
    return StaticEngine.next_batch(self)
