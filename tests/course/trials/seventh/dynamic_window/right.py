"""Right: rather than taking the minimum arrival time and testing it once, it reads the
clock once and asks whether *any* waiting request has waited max_wait_ms (the same
test, since the wait shrinks as arrival grows), short-circuiting on the first that has;
fullness is tested first. An empty queue gives [] without reading the clock.
"""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    waiting = self.waiting
    if len(waiting) == 0:
        return []
    now = self.clock()
    limit_ms = self.config.max_wait_ms
    ready = len(waiting) >= self.config.max_batch_size or any(
        (now - request.metrics.arrival_time) * 1e3 >= limit_ms for request in waiting)
    if not ready:
        return []
    return StaticEngine.next_batch(self)
