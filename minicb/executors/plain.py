"""The plain executor: the model, called in this process."""
import time


class WallClock:
    """The engine's clock when a model runs: time.perf_counter, and sleeping on it."""
    __call__ = staticmethod(time.perf_counter)
    sleep = staticmethod(time.sleep)


# ANCHOR: executor
class Executor:
    """Runs the model for a stage. ``config`` is the model's shape and ``dtype``
    its weights' type: a stage sizes its KV cache from them. ``clock`` gives
    every timestamp the engine records: here the wall clock."""
    clock = WallClock()

    def __init__(self, model):
        self.model = model
        self.config, self.dtype = model.config, model.dtype

    def execute(self, input_ids, positions, attn, sample_rows):
        """input_ids, positions [N]: the step's tokens, packed; attn: the stage's
        attention metadata, which the model calls once per layer; sample_rows:
        the rows whose next token is sampled. Returns their fp32 logits
        [len(sample_rows), vocab]."""
        hidden = self.model(input_ids, positions, attn)
        return self.model.compute_logits(hidden[sample_rows])

    def new_kv_cache(self, *leading):
        """K and V caches [layers, *leading, kv_heads, head_dim] beside the
        weights: the stage picks the middle axes."""
        return self.model.new_kv_cache(*leading)

    def close(self):
        """Drop the model: its weights are the bulk of what an engine holds."""
        self.model = None
# ANCHOR_END: executor
