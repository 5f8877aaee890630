"""Misconception: the window is a timer the batcher starts when it first finds requests
waiting. Requests that arrived while the previous batch ran have already waited: arrival
0.0, first call at 1.0 with max_wait_ms 50 returns [] (window "just opened") instead of a batch."""
from minicb.stages.static import StaticEngine


def next_batch(self) -> list:
    if not self.waiting:
        self._window_opened = None
        return []
    now = self.clock()
    opened = getattr(self, "_window_opened", None)
    if opened is None:
        opened = self._window_opened = now
    if (len(self.waiting) >= self.config.max_batch_size
            or now - opened >= self.config.max_wait_ms / 1000):
        self._window_opened = None
        return StaticEngine.next_batch(self)
    return []
