"""The plain executor: the model, called in this process."""
import time

import torch


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

    def new_batch_kv_cache(self, batch: int, capacity: int):
        """One batch's K and V (stages 1-3 make one for each batch)."""
        return self.new_kv_cache(batch, capacity)

    def weight_bytes(self) -> int:
        """What the model's weights (and buffers) take, where it runs."""
        return sum(t.numel() * t.element_size()
                   for t in [*self.model.parameters(), *self.model.buffers()])

    def profile_step(self, positions, sample_rows):
        """One forward pass as the plain executor runs it, for its peak memory:
        the tokens at ``positions``, attention left out (the kernels keep no
        [tokens, tokens] scores)."""
        no_attention = lambda layer, q, k, v: q            # noqa: E731
        input_ids = torch.zeros_like(positions)
        return Executor.execute(self, input_ids, positions, no_attention, sample_rows)

    def kv_memory(self, utilization: float) -> None:
        """None: the stage measures what is left (a profiled step, on a GPU)."""
        return None

    def close(self):
        """Drop the model: its weights are the bulk of what an engine holds."""
        self.model = None
# ANCHOR_END: executor
