"""Decode steps replayed from CUDA graphs (stage 5 on a GPU).

A decode step of a small model is hundreds of small kernels, and launching
them from Python can take longer than running them. A CUDA graph records
the launches of one forward pass once; replaying it is a single call.

A graph replays fixed shapes at fixed addresses, so the runner keeps static
input buffers sized for ``max_num_seqs`` and one graph per batch-size bucket
(1, 2, 4, 8, then multiples of 16). A step with n requests copies its inputs
into the first n rows and pads the rest of its bucket with rows that write
no K/V (slot -1) and attend to one key; their outputs are never read.

Every bucket is captured when the engine starts, largest first (the
smaller graphs then fit in the memory the largest reserved), as vLLM does:
a capture costs a forward pass or two, and it belongs to start-up, not to the
first step that happens to need that bucket.

Only decode steps (one new token per request) use graphs: prefills vary in
shape every step and are few. With ``capture=False`` the runner calls the
model on the same padded buffers without capturing: on a CPU, that is how
the tests check the padding.

``with_decode_graphs`` adds the runner to stage 5's engine (with or without
async scheduling) when ``cuda_graphs`` is on; the stage's own file knows
nothing of it.
"""
from functools import partial

import torch

from .stages.paged import PagedBatch


def bucket_sizes(max_num_seqs: int) -> list[int]:
    sizes = [b for b in (1, 2, 4, 8) if b < max_num_seqs]
    sizes += list(range(16, max_num_seqs, 16))
    return sizes + [max_num_seqs]


# ANCHOR: decode_graphs
class DecodeGraphs:
    """make_attention(slot_mapping, cu_seqlens_q, seq_lens, block_tables) builds
    the stage's attention object (a PagedBatch with max_query_len 1) on views
    of the static buffers."""

    def __init__(self, model, make_attention, max_num_seqs, max_blocks, device,
                 capture=True):
        self.model, self.make_attention, self.capture = model, make_attention, capture
        self.buckets = bucket_sizes(max_num_seqs)
        n = max_num_seqs
        self.input_ids = torch.zeros(n, dtype=torch.long, device=device)
        self.positions = torch.zeros(n, dtype=torch.long, device=device)
        self.slot_mapping = torch.full((n,), -1, dtype=torch.long, device=device)
        # one query each, always
        self.cu_seqlens_q = torch.arange(n + 1, dtype=torch.int32, device=device)
        self.seq_lens = torch.ones(n, dtype=torch.int32, device=device)
        self.block_tables = torch.zeros((n, max_blocks), dtype=torch.int32,
                                        device=device)
        self.graphs, self.outputs, self.pool = {}, {}, None
        if capture:
            for bucket in reversed(self.buckets):
                self.record(bucket)

    def __call__(self, input_ids, positions, attn):
        """The decode step's hidden states [n, hidden], as
        ``model(input_ids, positions, attn)``."""
        n = input_ids.shape[0]
        bucket = next(b for b in self.buckets if b >= n)
        self.fill(n, bucket, input_ids, positions, attn)
        if not self.capture:
            return self.forward(bucket)[:n]
        self.graphs[bucket].replay()
        return self.outputs[bucket][:n]

    def fill(self, n, bucket, input_ids, positions, attn):
        self.input_ids[:n].copy_(input_ids)
        self.positions[:n].copy_(positions)
        self.slot_mapping[:n].copy_(attn.slot_mapping)
        # padding rows store nothing...
        self.slot_mapping[n:bucket].fill_(-1)
        self.seq_lens[:n].copy_(attn.seq_lens)
        # ...and read one key of whatever block 0 holds
        self.seq_lens[n:bucket].fill_(1)
        width = attn.block_tables.shape[1]
        self.block_tables[:n, :width].copy_(attn.block_tables)
        self.block_tables[n:bucket].zero_()

    def forward(self, bucket):
        attn = self.make_attention(self.slot_mapping[:bucket],
                                   self.cu_seqlens_q[:bucket + 1],
                                   self.seq_lens[:bucket], self.block_tables[:bucket])
        return self.model(self.input_ids[:bucket], self.positions[:bucket], attn)

    def record(self, bucket):
        """Run once outside the graph (Triton compiles, allocations settle), then
        capture."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self.forward(bucket)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool):
            self.outputs[bucket] = self.forward(bucket)
        # every bucket shares one memory pool
        self.pool = graph.pool()
        self.graphs[bucket] = graph
# ANCHOR_END: decode_graphs


# ANCHOR: with_decode_graphs
def with_decode_graphs(engine_class):
    """engine_class (stage 5's, or its async form) with decode steps replayed
    from CUDA graphs."""
    return type(engine_class.__name__ + "WithDecodeGraphs",
                (DecodeGraphsEngine, engine_class), {})


class DecodeGraphsEngine:
    """Put before a stage-5 engine class by with_decode_graphs. On a CPU (the
    tests) the runner pads the same buffers without capturing."""

    def __init__(self, model, config):
        super().__init__(model, config)
        self.decode_graphs = self.make_decode_graphs(
            capture=str(config.device).startswith("cuda"))

    def forward(self, kind, ids, positions, attn):
        if kind == "decode":
            # one replay instead of every launch
            return self.decode_graphs(ids, positions, attn)
        return super().forward(kind, ids, positions, attn)

    def make_decode_graphs(self, capture) -> DecodeGraphs:
        cfg = self.config
        # A partial, not a closure over self: the graphs must not keep the engine (and
        # its KV cache) alive after the engine is dropped.
        make_attention = partial(decode_batch, self.k_cache, self.v_cache, self.ops,
                                 cfg.block_size)
        max_blocks = -(-cfg.max_model_len // cfg.block_size)
        return DecodeGraphs(self.model, make_attention, cfg.max_num_seqs, max_blocks,
                            self.k_cache.device, capture)


def decode_batch(k_cache, v_cache, ops, block_size, slot_mapping, cu_seqlens_q,
                 seq_lens, block_tables):
    """A PagedBatch of decode steps (one query per sequence)."""
    return PagedBatch(k_cache, v_cache, ops, slot_mapping, cu_seqlens_q, seq_lens,
                      block_tables, block_size, 1)
# ANCHOR_END: with_decode_graphs
