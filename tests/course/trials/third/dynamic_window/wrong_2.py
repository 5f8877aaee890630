"""Misconception: a wait is a whole number of milliseconds, so the elapsed time is truncated with
int() before the comparison; fine for integer windows, wrong for fractional ones.
Goes wrong: max_wait_ms=2.5, oldest waited 2.9 ms -> int gives 2 < 2.5, window stays open."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else StaticEngine.next_batch(self)."""
    if not self.waiting:
        return []
    oldest = min(r.metrics.arrival_time for r in self.waiting)
    waited_ms = int((self.clock() - oldest) * 1000)
    if len(self.waiting) >= self.config.max_batch_size or waited_ms >= self.config.max_wait_ms:
        return StaticEngine.next_batch(self)
    return []
