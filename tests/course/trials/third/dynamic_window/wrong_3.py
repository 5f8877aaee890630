"""Misconception: arrival times are ``time.perf_counter()`` readings (Request's default), so "now"
is ``time.perf_counter()`` too; but the engine's clock may be a simulated GPU's virtual clock.
Goes wrong: executor="simulated" (virtual clock near 0): perf_counter() is far ahead of it, so a request that arrived 1 ms ago looks long overdue -> closes at once."""
import time

from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else StaticEngine.next_batch(self)."""
    if not self.waiting:
        return []
    oldest = min(r.metrics.arrival_time for r in self.waiting)
    waited_ms = (time.perf_counter() - oldest) * 1000
    if len(self.waiting) >= self.config.max_batch_size or waited_ms >= self.config.max_wait_ms:
        return StaticEngine.next_batch(self)
    return []
