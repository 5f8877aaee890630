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
# What a padding row holds in each of a step's metadata tensors: no K/V written
# (slot -1), one key read (of whatever row or block 0 holds). Anything else: 0.
PADDING = {"slot_mapping": -1, "seq_lens": 1}


class GraphExecutor(Executor):
    """The plain executor, with decode steps replayed from CUDA graphs."""

    def __init__(self, model, config, capture=True):
        super().__init__(model)
        self.capture = capture
        # the most sequences in one step
        n = {"single": 1, "static": config.max_batch_size,
             "dynamic": config.max_batch_size}.get(config.engine, config.max_num_seqs)
        self.buckets = bucket_sizes(n)
        self.device = model.embed_tokens.weight.device
        self.max_model_len = config.max_model_len
        # a block table's widest: a request of max_model_len tokens
        self.max_width = -(-config.max_model_len // config.block_size)
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

    def new_kv_cache(self, *leading):
        """Stages 4-5 ask once, for [rows]: a cache of their own. Stages 1-3 ask
        for every batch, [batch, capacity]: they get a view of one buffer of
        max_batch_size rows and max_model_len columns, whose address every graph
        captures (a static batch's classic reservation). A batch wider than that
        (its longest prompt and its longest output may come from different
        requests) replaces it, and the graphs, which wrote to the old one."""
        if len(leading) != 2:
            return super().new_kv_cache(*leading)
        batch, capacity = leading
        if self.padded_kv is None or self.padded_kv[0].shape[2] < capacity:
            self.graphs, self.outputs, self.pool, self.padded_kv = {}, {}, None, None
            width = max(capacity, self.max_model_len)
            self.padded_kv = super().new_kv_cache(self.buckets[-1], width)
        return tuple(cache[:, :batch, :capacity] for cache in self.padded_kv)

    def execute(self, input_ids, positions, attn, sample_rows):
        n = input_ids.shape[0]
        if getattr(attn, "max_query_len", None) != 1:      # not a decode step
            bucket = next((b for b in self.prompt_buckets if b >= n), None)
            # (stage 5's profiled step passes no block tables: it runs eagerly)
            if bucket is None or not hasattr(attn, "block_tables"):
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
        bucket padded (PADDING)."""
        self.input_ids[:n].copy_(input_ids)
        self.positions[:n].copy_(positions)
        for name, value in step_tensors(attn):
            if name == "cu_seqlens_q":      # one query each: always 0, 1, 2, ...
                continue
            buffer = self.buffer(name, value)
            rows = buffer[:n, :value.shape[1]] if value.dim() == 2 else buffer[:n]
            rows.copy_(value)
            buffer[n:bucket] = PADDING.get(name, 0)

    def buffer(self, name, value):
        """The static buffer of one metadata tensor: max_num_seqs rows (block tables
        as wide as a request can need; cu_seqlens_q one more row)."""
        if name not in self.buffers:
            n = self.buckets[-1]
            like = dict(dtype=value.dtype, device=self.device)
            if name == "cu_seqlens_q":
                self.buffers[name] = torch.arange(n + 1, **like)
            else:
                shape = (n, self.max_width) if value.dim() == 2 else (n,)
                self.buffers[name] = torch.full(shape, PADDING.get(name, 0), **like)
        return self.buffers[name]

    def forward(self, bucket, attn):
        """The model on the first ``bucket`` rows of the static buffers: the
        step's attention metadata (its caches, kernels and sizes), with its
        tensors swapped for views of the buffers, and a padded batch's cache for
        the bucket's rows of the buffer it is a view of."""
        views = {name: self.buffer(name, value)[:bucket + (name == "cu_seqlens_q")]
                 for name, value in step_tensors(attn)}
        # (a padded batch's cache: [layers, rows, columns, ...])
        if self.padded_kv is not None and attn.k_cache.dim() == 5:
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
        n, seqs = input_ids.shape[0], attn.seq_lens.shape[0]
        buf = self.prompt_inputs(attn)
        if self.capture and not self.prompt_graphs:
            # on the buffers as made, no step in them: a bucket smaller than this step
            # would otherwise read and write past its rows while it is captured
            with all_or_none(self.prompt_graphs, self.prompt_outputs):
                for size in reversed(self.prompt_buckets):
                    self.prompt_graphs[size], self.prompt_outputs[size] = self.captured(
                        lambda size=size: self.forward_prompt(size, attn))
        for name, value, padding in (("input_ids", input_ids, 0),
                                     ("positions", positions, 0),
                                     ("slot_mapping", attn.slot_mapping, -1)):
            buf[name][:n].copy_(value)
            buf[name][n:bucket] = padding
        buf["cu_seqlens_q"][:seqs + 1].copy_(attn.cu_seqlens_q)
        buf["cu_seqlens_q"][seqs + 1:] = n
        buf["seq_lens"][:seqs].copy_(attn.seq_lens)
        buf["seq_lens"][seqs:] = 1
        buf["block_tables"][:seqs, :attn.block_tables.shape[1]].copy_(attn.block_tables)
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
            tokens, seqs = self.prompt_buckets[-1], self.buckets[-1]

            def new(shape, value, like):
                return torch.full(shape, value, dtype=like.dtype, device=self.device)
            self.prompt_buffers = dict(
                input_ids=new((tokens,), 0, self.input_ids),
                positions=new((tokens,), 0, self.positions),
                slot_mapping=new((tokens,), -1, attn.slot_mapping),
                cu_seqlens_q=new((seqs + 1,), 0, attn.cu_seqlens_q),
                seq_lens=new((seqs,), 1, attn.seq_lens),
                block_tables=new((seqs, self.max_width), 0, attn.block_tables))
        return self.prompt_buffers

    def forward_prompt(self, bucket, attn):
        """The model on the first ``bucket`` token rows of the prompt buffers, its
        attention over listed query tiles sized for ``bucket`` queries."""
        # (here: the kernels load Triton, which a CPU without prompt graphs never needs)
        from ..kernels.paged_attention import paged_attention_tiles
        buf = self.prompt_buffers
        # the step's tile list: the first layer makes it, every other layer reads it
        ops = SimpleNamespace(store_kv_cache=attn.ops.store_kv_cache,
                              paged_attention=partial(paged_attention_tiles, tiles={}))
        on_buffers = dataclasses.replace(
            attn, ops=ops, max_query_len=bucket,
            slot_mapping=buf["slot_mapping"][:bucket], cu_seqlens_q=buf["cu_seqlens_q"],
            seq_lens=buf["seq_lens"], block_tables=buf["block_tables"])
        return self.model(buf["input_ids"][:bucket], buf["positions"][:bucket],
                          on_buffers)
    # ANCHOR_END: prompt_steps


def step_tensors(attn) -> list:
    """(name, tensor) of each per-step tensor of a stage's attention metadata:
    not the KV caches, which stay where they are."""
    return [(f.name, getattr(attn, f.name)) for f in dataclasses.fields(attn)
            if isinstance(getattr(attn, f.name), torch.Tensor) and not f.name.endswith("_cache")]


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
