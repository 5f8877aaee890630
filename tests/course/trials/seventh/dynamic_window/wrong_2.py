"""Misconception: a request's arrival_time is a time.perf_counter() reading (that is
what Request stamps by default), so the wait is measured against time.perf_counter()
rather than the engine's own clock. The contract measures on self.clock(), which is a
virtual clock under the simulated executor (and in the course's runs) and need not share
perf_counter's origin. Input: a virtual clock at 0.001 s with one request that arrived
at 0.0 s and max_wait_ms=50 -> the window is still open ([]); measured against
perf_counter (thousands of seconds since boot) it looks hours old and a batch is cut at
once.
"""
import time

from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        return []
    full = len(self.waiting) >= self.config.max_batch_size
    now = time.perf_counter()
    oldest = min(r.metrics.arrival_time for r in self.waiting)
    timed_out = (now - oldest) * 1e3 >= self.config.max_wait_ms
    return StaticEngine.next_batch(self) if full or timed_out else []
