"""An executor that replays decode steps from CUDA graphs (every stage on a GPU).

A decode step of a small model is hundreds of small kernels, and launching
them from Python can take longer than running them. A CUDA graph records
the launches of one forward pass once; replaying it is a single call.

A graph replays fixed shapes at fixed addresses, so this executor keeps
static input buffers sized for the most sequences a step can hold (one in
stage 1, ``max_batch_size`` in stages 2-3, ``max_num_seqs`` in 4-5) and one graph per
batch-size bucket (1, 2, 4, 8, then multiples of 16). A step with n sequences
copies its inputs, and each tensor of its stage's attention metadata (stages
1-2's lengths, stage 4's slot starts, stage 5's block tables), into the
first n rows and pads the rest of its bucket with rows that write no K/V that
a sequence reads and attend to one key; their outputs are never read.

Stages 1-3 make a KV cache for each batch. A graph would keep writing to the
first one it captured, so here every batch's cache is a view of one buffer
this executor keeps (``new_kv_cache``), as wide as the widest batch so far and
with a row for every padding row too.

Decode steps (one query per sequence: ``attn.max_query_len == 1``) use
graphs; steps that carry prompt tokens vary in shape every step, and run
eagerly, except in stage 5 with ``prompt_graphs=True``: there a step of up to
2,048 tokens is padded to a bucket of tokens (64, 128, ... 2,048) and its
sequences to ``max_num_seqs``, and its attention runs over a fixed grid of
listed query tiles (``paged_attention_tiles``), whose extra programs exit at
once. The first decode step captures every bucket, largest first (the smaller
graphs then fit in the memory the largest reserved), with its attention
metadata moved onto the static buffers, and the first step that carries a
prompt every token bucket; a benchmark's warm-up pays for both.
With ``capture=False`` the executor runs the model on the same padded buffers
without capturing: on a CPU, that is how the tests check the padding.

The stage never learns of any of this: it hands this executor the same
inputs it hands the plain one.
"""
import dataclasses
from contextlib import contextmanager
from functools import partial
from types import SimpleNamespace

import torch

from .plain import Executor


def bucket_sizes(max_num_seqs: int) -> list[int]:
    sizes = [b for b in (1, 2, 4, 8) if b < max_num_seqs]
    sizes += list(range(16, max_num_seqs, 16))
    return sizes + [max_num_seqs]


# The token counts prompt-carrying steps are padded to (prompt_graphs=True); a larger
# step runs eagerly, its launches small beside its work.
PROMPT_BUCKETS = (64, 128, 256, 512, 1024, 2048)


def prompt_buckets(config) -> list[int]:
    """The token buckets of stage 5's prompt steps, none without prompt_graphs."""
    if not config.prompt_graphs:
        return []
    # (a budget unset until the model's length is known: its default, 2,048 or more)
    budget = config.max_num_batched_tokens or PROMPT_BUCKETS[-1]
    # every bucket below the budget, and the first that holds a step of the whole budget
    return ([b for b in PROMPT_BUCKETS if b < budget]
            + [b for b in PROMPT_BUCKETS if b >= budget][:1])


# ANCHOR: graph_executor
class GraphExecutor(Executor):
    """The plain executor, with decode steps replayed from CUDA graphs. What a
    step's attention metadata holds, and how to pad it, its class declares
    (``STEP``, a StepTensors: minicb/attention.py)."""

    def __init__(self, model, config, max_sequences: int, capture=True):
        """max_sequences: the most sequences one of the stage's steps holds
        (its ``sequences_per_step``), which the largest bucket holds."""
        super().__init__(model)
        self.capture = capture
        self.buckets = bucket_sizes(max_sequences)
        self.device = model.embed_tokens.weight.device
        self.max_model_len = config.max_model_len
        # a table's widest: a request of max_model_len tokens
        self.max_width = -(-config.max_model_len // config.block_size)
        n = self.buckets[-1]
        self.input_ids = torch.zeros(n, dtype=torch.long, device=self.device)
        self.positions = torch.zeros(n, dtype=torch.long, device=self.device)
        # one per tensor of the stage's metadata, made when first seen
        self.buffers = {}
        self.padded_kv = None           # stages 1-3: the buffer every batch's K/V view
        self.graphs, self.outputs, self.pool = {}, {}, None
        # stage 5 with prompt_graphs: the token counts its prompt steps are padded to
        self.prompt_buckets = prompt_buckets(config)
        self.prompt_buffers, self.prompt_graphs, self.prompt_outputs = {}, {}, {}

    def close(self):
        """Drop the graphs, their memory pool and the static buffers, then the model."""
        self.graphs, self.outputs, self.pool = {}, {}, None
        self.prompt_buffers, self.prompt_graphs, self.prompt_outputs = {}, {}, {}
        self.input_ids = self.positions = self.padded_kv = None
        self.buffers = {}
        super().close()

    def new_batch_kv_cache(self, batch, capacity):
        """Stages 1-3 ask for every batch: they get a view of one buffer of
        max_batch_size rows and max_model_len columns, whose address every graph
        captures (a static batch's classic reservation). A batch wider than that
        (its longest prompt and its longest output may come from different
        requests) replaces it, and the graphs, which wrote to the old one."""
        if self.padded_kv is None or self.padded_kv[0].shape[2] < capacity:
            self.graphs, self.outputs, self.pool, self.padded_kv = {}, {}, None, None
            width = max(capacity, self.max_model_len)
            self.padded_kv = self.new_kv_cache(self.buckets[-1], width)
        return tuple(cache[:, :batch, :capacity] for cache in self.padded_kv)

    def execute(self, input_ids, positions, attn, sample_rows):
        n = input_ids.shape[0]
        if attn.max_query_len != 1:                        # not a decode step
            bucket = next((b for b in self.prompt_buckets if b >= n), None)
            if bucket is None:
                return super().execute(input_ids, positions, attn, sample_rows)
            return self.execute_prompt(bucket, input_ids, positions, attn, sample_rows)
        bucket = next(b for b in self.buckets if b >= n)
        # (this makes the buffers, before any capture)
        self.fill(n, bucket, input_ids, positions, attn)
        if self.capture and not self.graphs:
            with all_or_none(self.graphs, self.outputs):
                for size in reversed(self.buckets):
                    self.record(size, attn)
        if self.capture:
            self.graphs[bucket].replay()                   # one call for every launch
            hidden = self.outputs[bucket]
        else:
            hidden = self.forward(bucket, attn)
        return self.model.compute_logits(hidden[:n][sample_rows])

    def fill(self, n, bucket, input_ids, positions, attn):
        """The step's inputs into the first n rows of the static buffers; rows n to
        bucket padded. One query each: a row per token is a row per sequence, and
        the boundaries are always 0, 1, 2, ... (made so, never copied)."""
        self.input_ids[:n].copy_(input_ids)
        self.positions[:n].copy_(positions)
        step = attn.STEP
        for name in step.tokens + step.sequences + step.tables:
            value, buffer = getattr(attn, name), self.buffer(step, name, attn)
            rows = buffer[:n, :value.shape[1]] if name in step.tables else buffer[:n]
            rows.copy_(value)
            buffer[n:bucket] = step.padding.get(name, 0)

    def buffer(self, step, name, attn):
        """The static buffer of one metadata tensor: max_num_seqs rows (tables as
        wide as a request can need; the boundaries one more row)."""
        if name not in self.buffers:
            n = self.buckets[-1]
            like = dict(dtype=getattr(attn, name).dtype, device=self.device)
            if name == step.boundaries:
                self.buffers[name] = torch.arange(n + 1, **like)
            else:
                shape = (n, self.max_width) if name in step.tables else (n,)
                padding = step.padding.get(name, 0)
                self.buffers[name] = torch.full(shape, padding, **like)
        return self.buffers[name]

    def forward(self, bucket, attn):
        """The model on the first ``bucket`` rows of the static buffers: the
        step's attention metadata (its caches, kernels and sizes), with its
        tensors swapped for views of the buffers, and a batch's cache for the
        bucket's rows of the buffer it is a view of."""
        step = attn.STEP
        views = {name: self.buffer(step, name, attn)[:bucket]
                 for name in step.tokens + step.sequences + step.tables}
        if step.boundaries:                # one row more than sequences
            boundaries = self.buffer(step, step.boundaries, attn)
            views[step.boundaries] = boundaries[:bucket + 1]
        if step.batch_cache:               # [layers, rows, columns, ...]
            views["k_cache"], views["v_cache"] = (c[:, :bucket] for c in self.padded_kv)
        on_buffers = dataclasses.replace(attn, **views)
        return self.model(self.input_ids[:bucket], self.positions[:bucket], on_buffers)

    def record(self, bucket, attn):
        self.graphs[bucket], self.outputs[bucket] = self.captured(
            lambda: self.forward(bucket, attn))

    def captured(self, run):
        """Run once outside the graph (Triton compiles, allocations settle), then
        capture. Returns the graph and the output tensor it writes."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            run()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool):
            output = run()
        # every graph shares one memory pool: each output is read before the next replay
        self.pool = graph.pool()
        return graph, output
# ANCHOR_END: graph_executor

    # ANCHOR: prompt_steps
    def execute_prompt(self, bucket, input_ids, positions, attn, sample_rows):
        """A step that carries prompt tokens (stage 5, prompt_graphs=True): its
        tokens in the first rows of bucket-sized buffers, the rest rows that write
        no K/V; its sequences in the first rows of max_num_seqs-sized ones, the
        rest sequences with no queries. Every bucket is captured at the first such
        step, largest first, before the step fills the buffers."""
        step, n = attn.STEP, input_ids.shape[0]
        seqs = getattr(attn, step.boundaries).shape[0] - 1
        buf = self.prompt_inputs(attn)
        if self.capture and not self.prompt_graphs:
            # on the buffers as made, no step in them: a bucket smaller than this step
            # would otherwise read and write past its rows while it is captured
            with all_or_none(self.prompt_graphs, self.prompt_outputs):
                for size in reversed(self.prompt_buckets):
                    self.prompt_graphs[size], self.prompt_outputs[size] = self.captured(
                        lambda size=size: self.forward_prompt(size, attn))
        tokens = {"input_ids": input_ids, "positions": positions,
                  **{name: getattr(attn, name) for name in step.tokens}}
        for name, value in tokens.items():
            buf[name][:n].copy_(value)
            buf[name][n:bucket] = step.padding.get(name, 0)
        buf[step.boundaries][:seqs + 1].copy_(getattr(attn, step.boundaries))
        buf[step.boundaries][seqs + 1:] = n                # the rest: no queries
        for name in step.sequences + step.tables:
            value = getattr(attn, name)
            rows = buf[name][:seqs]
            (rows[:, :value.shape[1]] if name in step.tables else rows).copy_(value)
            buf[name][seqs:] = step.padding.get(name, 0)
        if self.capture:
            self.prompt_graphs[bucket].replay()
            hidden = self.prompt_outputs[bucket]
        else:
            hidden = self.forward_prompt(bucket, attn)
        return self.model.compute_logits(hidden[:n][sample_rows])

    def prompt_inputs(self, attn) -> dict:
        """The prompt steps' static buffers, made at the first such step: every
        row padding, every sequence without queries."""
        if not self.prompt_buffers:
            step, tokens, seqs = attn.STEP, self.prompt_buckets[-1], self.buckets[-1]
            shapes = {"input_ids": (tokens,), "positions": (tokens,)}
            shapes |= {name: (tokens,) for name in step.tokens}
            shapes |= {name: (seqs,) for name in step.sequences}
            shapes |= {name: (seqs, self.max_width) for name in step.tables}
            shapes[step.boundaries] = (seqs + 1,)
            dtypes = {name: getattr(attn, name).dtype for name in shapes
                      if name not in ("input_ids", "positions")}
            dtypes |= {"input_ids": torch.long, "positions": torch.long}
            self.prompt_buffers = {
                name: torch.full(shape, step.padding.get(name, 0), dtype=dtypes[name],
                                 device=self.device)
                for name, shape in shapes.items()}
        return self.prompt_buffers

    def forward_prompt(self, bucket, attn):
        """The model on the first ``bucket`` token rows of the prompt buffers, its
        attention over listed query tiles sized for ``bucket`` queries."""
        step, buf = attn.STEP, self.prompt_buffers
        # the step's tile list: the first layer makes it, every other layer reads it
        tiled = partial(attn.ops.paged_attention_tiles, tiles={})
        ops = SimpleNamespace(store_kv_cache=attn.ops.store_kv_cache,
                              paged_attention=tiled)
        views = {name: buf[name][:bucket] for name in step.tokens}
        per_sequence = (step.boundaries, *step.sequences, *step.tables)
        views |= {name: buf[name] for name in per_sequence}
        on_buffers = dataclasses.replace(attn, ops=ops, max_query_len=bucket, **views)
        input_ids, positions = buf["input_ids"][:bucket], buf["positions"][:bucket]
        return self.model(input_ids, positions, on_buffers)
    # ANCHOR_END: prompt_steps


@contextmanager
def all_or_none(*captured):
    """Keep every graph captured inside, or none: where one capture fails (out of
    memory, say), the step raises and the next step captures them all again,
    instead of finding some buckets missing."""
    try:
        yield
    except BaseException:
        for graphs in captured:
            graphs.clear()
        raise
