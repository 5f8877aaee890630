"""What a stage may ask of the executor that runs its model, and all it may ask.

Every executor (``minicb.executors``: plain, CUDA graphs, tensor-parallel,
simulated) keeps this contract, and a stage's timing wrapper
(``observer.TimedExecutor``) forwards it and nothing more, so a stage cannot come
to lean on one executor's extras unseen.
"""
from typing import Protocol, runtime_checkable


@runtime_checkable
class StepExecutor(Protocol):
    config: object     # the model's shape (a ModelConfig): a stage sizes its KV cache from it
    dtype: object      # the weights' torch dtype, which the KV cache takes too
    clock: object      # every timestamp the engine records: the wall clock, or a simulated GPU's

    def execute(self, input_ids, positions, attn, sample_rows):
        """One forward pass over a step's packed tokens: the fp32 logits of the
        rows that sample, [len(sample_rows), vocab]."""

    def new_kv_cache(self, *leading):
        """K and V caches [layers, *leading, kv_heads, head_dim]."""

    def new_batch_kv_cache(self, batch: int, capacity: int):
        """One batch's K and V (stages 1-3 make one for each batch)."""

    def weight_bytes(self) -> int | None:
        """What the weights take where they run; None where this process holds none."""

    def profile_step(self, positions, sample_rows):
        """One forward pass at a step's peak memory, attention left out, for sizing
        the KV cache from what is left."""

    def kv_memory(self, utilization: float) -> int | None:
        """The bytes the KV cache may take, where the executor knows them without a
        step (a simulated GPU's memory less its weights); None where a stage measures
        them (a profiled step, or the memory its slots take)."""

    def close(self):
        """Drop what the executor holds."""


MEMBERS = ("config", "dtype", "clock", "execute", "new_kv_cache", "new_batch_kv_cache", "weight_bytes",
           "profile_step", "kv_memory", "close")


class ExecutorWrapper:
    """An executor around another that forwards the contract, and only it: a
    subclass adds to what it wraps (``execute``, say) without reaching past it."""

    def __init__(self, executor: StepExecutor):
        self.executor = executor

    config = property(lambda self: self.executor.config)
    dtype = property(lambda self: self.executor.dtype)
    clock = property(lambda self: self.executor.clock)

    def execute(self, input_ids, positions, attn, sample_rows):
        return self.executor.execute(input_ids, positions, attn, sample_rows)

    def new_kv_cache(self, *leading):
        return self.executor.new_kv_cache(*leading)

    def new_batch_kv_cache(self, batch: int, capacity: int):
        return self.executor.new_batch_kv_cache(batch, capacity)

    def weight_bytes(self) -> int | None:
        return self.executor.weight_bytes()

    def profile_step(self, positions, sample_rows):
        return self.executor.profile_step(positions, sample_rows)

    def kv_memory(self, utilization: float) -> int | None:
        return self.executor.kv_memory(utilization)

    def close(self):
        self.executor.close()
