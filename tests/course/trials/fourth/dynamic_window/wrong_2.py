"""Misconception: the window closes once the oldest request has waited *longer than* max_wait_ms
(strict >). Met exactly it stays open: max_wait_ms=0 with a request that arrived at this very
clock reading (a simulated clock that has not moved) never closes until time passes."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        return []
    full = len(self.waiting) >= self.config.max_batch_size
    oldest = min(request.metrics.arrival_time for request in self.waiting)
    if full or (self.clock() - oldest) * 1000.0 > self.config.max_wait_ms:
        return StaticEngine.next_batch(self)
    return []
