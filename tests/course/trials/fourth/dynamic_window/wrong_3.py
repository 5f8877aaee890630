"""Misconception: a batch is full when exactly max_batch_size requests wait (==). With more
waiting than that (requests that arrived while the last batch ran), the full rule never fires
and the batch waits for the clock: 9 fresh requests, max_batch_size 8, returns []."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        return []
    full = len(self.waiting) == self.config.max_batch_size
    oldest = min(request.metrics.arrival_time for request in self.waiting)
    timed_out = (self.clock() - oldest) * 1000.0 >= self.config.max_wait_ms
    return StaticEngine.next_batch(self) if full or timed_out else []
