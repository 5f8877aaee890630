"""Misconception: "now" is time.perf_counter(), the clock RequestMetrics' default
arrival_time uses. Same as self.clock() with a real model, but on the simulated
executor's virtual clock (starting at 0) every request looks hours old: no window at all.
"""
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
