"""Chapter 3: the dynamic batcher's window.

Stage 3 waits a little to fill a batch: it closes when it is full, or when its
oldest request has waited long enough. Check: ``python -m minicb check dynamic_window``.
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
    raise NotImplementedError
