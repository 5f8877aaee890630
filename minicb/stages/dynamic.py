"""Stage 3: dynamic batching.

Stage 2 starts a batch with whatever is waiting. Stage 3 waits a little to
fill it: a batch closes when ``max_batch_size`` requests wait, **or** when the
oldest waiting request has waited ``max_wait_ms``. Like a bus that leaves when
it is full or when its timetable says so. Once closed, the batch runs to
completion exactly as in stage 2; only the closing rule is new.

``max_wait_ms`` is the knob between latency and throughput: a longer window
fills bigger batches (more tokens per forward pass) and makes the first
requests of each batch wait longer for their first token.
"""

from .static import StaticEngine


# ANCHOR: engine
class DynamicEngine(StaticEngine):
    name = "dynamic"

    def next_batch(self):
        if not self.waiting:
            return []
        full = len(self.waiting) >= self.config.max_batch_size
        oldest = min(r.metrics.arrival_time for r in self.waiting)
        timed_out = (self.clock() - oldest) * 1e3 >= self.config.max_wait_ms
        return super().next_batch() if full or timed_out else []
# ANCHOR_END: engine
