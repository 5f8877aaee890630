"""Correct. Differs from the obvious "len >= size or now - waiting[0].arrival >=
wait": asks whether *any* waiting request has waited long enough (the same as the
oldest, whatever order bucketing left the queue in), measured in milliseconds.
"""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    """[] while the window is open; else the batch stage 2 would cut,
    ``StaticEngine.next_batch(self)``.

    The window closes when ``self.config.max_batch_size`` requests wait in
    ``self.waiting``, or when the oldest of them (``request.metrics.arrival_time``,
    seconds on ``self.clock()``) has waited at least ``self.config.max_wait_ms``
    milliseconds. With nothing waiting, there is no batch.
    """
    if not self.waiting:
        return []
    full = len(self.waiting) >= self.config.max_batch_size
    if not full:
        now = self.clock()
        overdue = any((now - request.metrics.arrival_time) * 1e3 >= self.config.max_wait_ms
                      for request in self.waiting)
        if not overdue:
            return []
    return StaticEngine.next_batch(self)
