"""Misconception: the window opens when the batcher first sees a waiting request, so it
starts its own timer then (kept on the engine) and closes the batch max_wait_ms later.
The contract counts from the oldest request's arrival: a request that arrived while the
previous batch was still running has already been waiting. Input: max_batch_size=8,
max_wait_ms=50, one request that arrived at 0.00 s, next_batch first called at clock
0.08 s (a batch was running until then) -> it has waited 80 ms, so a batch is cut now;
this starts its timer at 0.08 s and returns [] until 0.13 s.
"""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        self.window_opened = None
        return []
    now = self.clock()
    if getattr(self, "window_opened", None) is None:
        self.window_opened = now
    full = len(self.waiting) >= self.config.max_batch_size
    timed_out = (now - self.window_opened) * 1e3 >= self.config.max_wait_ms
    if full or timed_out:
        self.window_opened = None
        return StaticEngine.next_batch(self)
    return []
