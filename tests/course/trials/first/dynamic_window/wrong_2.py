"""Misconception: the window closes once the oldest has waited *longer* than max_wait_ms
(strict >). At the boundary it stays open: with max_wait_ms=0 on a virtual clock that has
not moved since the arrival, a lone request never gets a batch (stage 2 would start it).
"""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else StaticEngine.next_batch(self)."""
    if not self.waiting:
        return []
    if len(self.waiting) >= self.config.max_batch_size:
        return StaticEngine.next_batch(self)
    oldest = min(r.metrics.arrival_time for r in self.waiting)
    if (self.clock() - oldest) * 1000 > self.config.max_wait_ms:
        return StaticEngine.next_batch(self)
    return []
