"""Misconception: arrival times come from time.perf_counter (Request's default), so the
window is timed with it too, not with self.clock(). Right on the plain executor's wall
clock; on the simulated executor's virtual clock (starts at 0) every window looks expired."""
import time

from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        return []
    oldest = min(r.metrics.arrival_time for r in self.waiting)
    full = len(self.waiting) >= self.config.max_batch_size
    expired = (time.perf_counter() - oldest) * 1e3 >= self.config.max_wait_ms
    return StaticEngine.next_batch(self) if full or expired else []
