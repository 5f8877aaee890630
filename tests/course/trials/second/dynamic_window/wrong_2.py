"""Misconception: the window closes once the oldest request has waited *longer than*
max_wait_ms (strict >). Goes wrong when the wait equals it exactly: with max_wait_ms=0 on
the simulated executor's virtual clock (arrival == now), a lone request never leaves."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        return []
    oldest = min(r.metrics.arrival_time for r in self.waiting)
    full = len(self.waiting) >= self.config.max_batch_size
    expired = (self.clock() - oldest) * 1e3 > self.config.max_wait_ms
    return StaticEngine.next_batch(self) if full or expired else []
