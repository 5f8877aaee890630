"""Misconception: the window measures quiet time, closing once max_wait_ms pass with no new
arrival (a debounce on the newest request). Arrivals every 40 ms with max_wait_ms 50 keep it
open forever: arrivals 0.00 and 0.04, now 0.06 returns [] though the oldest waited 60 ms."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        return []
    if len(self.waiting) >= self.config.max_batch_size:
        return StaticEngine.next_batch(self)
    newest = max(request.metrics.arrival_time for request in self.waiting)
    if self.clock() - newest >= self.config.max_wait_ms / 1000:
        return StaticEngine.next_batch(self)
    return []
