"""An executor with no model: each forward pass moves a virtual clock by what the cost model says it takes.

Which requests run, how many tokens each computes, which blocks they hold and
when one is preempted need none of the model's arithmetic: only what each
step costs and how long each answer is. So the engine's own stages (their
batching, the scheduler, the block manager, the metrics and the step log)
run unchanged on this executor, at a real model's scale on a simulated GPU,
in seconds on a laptop. Every time they record is read from this executor's
clock: a prediction (``minicb.costmodel``), never a measurement.

It allocates no weights and no K/V: a shape's KV memory is counted by the
stage, never held. Its logits make token 0 the choice of every row; the
model has no end-of-sequence token, so each answer is as long as its
``max_tokens`` says.
"""
import dataclasses

import torch

from ..attention import fields_by_rows
from ..costmodel import HARDWARE, MODEL_SHAPES, Hardware, kv_budget, step_seconds
from ..model import ModelConfig


# ANCHOR: virtual_clock
class VirtualClock:
    """Seconds on the simulated GPU's timeline: it starts at 0 and moves only
    when a forward pass runs (by its predicted time) or the engine's driver
    sleeps (waiting for an arrival)."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float):
        self.now += seconds
# ANCHOR_END: virtual_clock


# ANCHOR: simulated_executor
class SimulatedExecutor:
    """Runs a model shape on a simulated GPU: a key of minicb.costmodel.HARDWARE,
    or a Hardware profile (workshop.measure.calibrate measures this machine's)."""

    def __init__(self, shape: str, hardware: "str | Hardware", graph_tokens=0,
                 replayed_queries=1):
        if shape not in MODEL_SHAPES:
            raise ValueError(f"model {shape!r}: the simulated executor knows "
                             f"the shapes {sorted(MODEL_SHAPES)}")
        if not isinstance(hardware, Hardware) and hardware not in HARDWARE:
            raise ValueError(f"hardware {hardware!r}: choose one of {sorted(HARDWARE)}")
        self.shape = MODEL_SHAPES[shape]
        if not isinstance(hardware, Hardware):
            hardware = HARDWARE[hardware]
        self.hardware = hardware
        # prompt_graphs: a step that carries a prompt, of up to graph_tokens tokens
        # (GraphExecutor's largest token bucket), replays a graph and costs no launches
        self.graph_tokens = graph_tokens
        # a step whose sequences each bring at most this many queries replays a graph
        # too: 1, a decode step; with speculative decoding k + 1, a verify step
        self.replayed_queries = replayed_queries
        self.replayed = dataclasses.replace(hardware, prompt_step_overhead=0.0)
        self.dtype = getattr(torch, self.hardware.dtype)
        self.config = model_config(self.shape)
        self.clock = VirtualClock()

    def execute(self, input_ids, positions, attn, sample_rows):
        sample_rows = torch.as_tensor(sample_rows).tolist()
        sequences = step_sequences(positions.tolist(), sample_rows, attn)
        replayed = (positions.numel() <= self.graph_tokens
                    or max(n for n, _ in sequences) <= self.replayed_queries)
        profile = self.replayed if replayed else self.hardware
        self.clock.sleep(step_seconds(profile, self.shape, self.dtype.itemsize,
                                        sequences, len(sample_rows)))
        return torch.zeros(len(sample_rows), 1)       # token 0, for every row

    def new_kv_cache(self, *leading):
        """Counted by the stage, never held: a stand-in with no memory."""
        return torch.empty(0), torch.empty(0)

    def new_batch_kv_cache(self, batch: int, capacity: int):
        return self.new_kv_cache(batch, capacity)

    def weight_bytes(self) -> None:
        """None: no weights are held anywhere (kv_memory sizes the cache)."""
        return None

    def profile_step(self, positions, sample_rows):
        """No memory to measure: the logits a step would give, and no time."""
        return torch.zeros(len(sample_rows), 1)

    def kv_memory(self, utilization: float) -> int:
        """Bytes the real GPU would leave the KV cache: its memory less the weights."""
        budget = kv_budget(self.hardware, self.shape, self.dtype.itemsize, utilization)
        return int(budget)

    def close(self):
        """Nothing runs anywhere."""
# ANCHOR_END: simulated_executor


def step_sequences(positions: list[int], sample_rows: list[int], attn) -> list[tuple[int, int]]:
    """(new tokens, context after them) of each sequence of a step: cut where its
    metadata's boundaries say (stages 4-6, where a verify step samples every row
    of a sequence), else where the positions do (split_sequences)."""
    boundaries = fields_by_rows(attn)["boundaries"]
    if not boundaries:
        return split_sequences(positions, sample_rows)
    ends = getattr(attn, boundaries[0].name).tolist()
    return [(end - start, positions[end - 1] + 1) for start, end in zip(ends, ends[1:])]


def split_sequences(positions: list[int], sample_rows: list[int]) -> list[tuple[int, int]]:
    """(new tokens, context after them) of each sequence in a step's packed
    tokens. A sequence's positions count up by one; a new one starts where they
    do not, or after a row that samples (a sequence's last token)."""
    sequences, ends, start = [], set(sample_rows), 0
    for i in range(1, len(positions) + 1):
        if i == len(positions) or positions[i] != positions[i - 1] + 1 or i - 1 in ends:
            sequences.append((i - start, positions[i - 1] + 1))
            start = i
    return sequences


def model_config(shape) -> ModelConfig:
    """What a stage reads of a model (its KV bytes per token, vocabulary and
    context) for a shape with no weights."""
    return ModelConfig(
        model_type="llama", vocab_size=shape.vocab, hidden_size=shape.hidden,
        intermediate_size=shape.intermediate, num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads, num_key_value_heads=shape.kv_heads,
        head_dim=shape.head_dim, rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling=None,
        qkv_bias=False, o_bias=False, qk_norm=False, tie_word_embeddings=shape.tied_embeddings,
        max_position_embeddings=shape.max_context, eos_token_ids=())
