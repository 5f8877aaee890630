"""Misconception: the window closes once the oldest has waited *longer than* max_wait_ms. Goes
wrong when the wait meets it exactly: on the simulated clock, or with max_wait_ms=0 and a request
that arrived at this instant, the batch is held back ([] instead of the batch)."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else the batch stage 2 would cut."""
    if not self.waiting:
        return []
    oldest = min(request.metrics.arrival_time for request in self.waiting)
    waited_ms = (self.clock() - oldest) * 1000
    if len(self.waiting) >= self.config.max_batch_size or waited_ms > self.config.max_wait_ms:
        return StaticEngine.next_batch(self)
    return []
