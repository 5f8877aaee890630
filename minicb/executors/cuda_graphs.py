"""An executor that replays decode steps from CUDA graphs (stage 5 on a GPU).

A decode step of a small model is hundreds of small kernels, and launching
them from Python can take longer than running them. A CUDA graph records
the launches of one forward pass once; replaying it is a single call.

A graph replays fixed shapes at fixed addresses, so this executor keeps
static input buffers sized for ``max_num_seqs`` and one graph per batch-size
bucket (1, 2, 4, 8, then multiples of 16). A step with n requests copies its
inputs into the first n rows and pads the rest of its bucket with rows that
write no K/V (slot -1) and attend to one key; their outputs are never read.

Only decode steps (one query per sequence: ``attn.max_query_len == 1``) use
graphs: prefills vary in shape every step and are few. The first decode step
captures every bucket, largest first (the smaller graphs then fit in the
memory the largest reserved), with its attention metadata moved onto the
static buffers; a benchmark's warm-up pays for it. With ``capture=False`` the
executor runs the model on the same padded buffers without capturing: on a
CPU, that is how the tests check the padding.

The stage never learns of any of this: it hands this executor the same
inputs it hands the plain one.
"""
import dataclasses

import torch

from .plain import Executor


def bucket_sizes(max_num_seqs: int) -> list[int]:
    sizes = [b for b in (1, 2, 4, 8) if b < max_num_seqs]
    sizes += list(range(16, max_num_seqs, 16))
    return sizes + [max_num_seqs]


# ANCHOR: graph_executor
class GraphExecutor(Executor):
    """The plain executor, with decode steps replayed from CUDA graphs."""

    def __init__(self, model, config, capture=True):
        super().__init__(model)
        self.capture = capture
        self.buckets = bucket_sizes(config.max_num_seqs)
        n, device = config.max_num_seqs, model.embed_tokens.weight.device
        max_blocks = -(-config.max_model_len // config.block_size)
        self.input_ids = torch.zeros(n, dtype=torch.long, device=device)
        self.positions = torch.zeros(n, dtype=torch.long, device=device)
        self.slot_mapping = torch.full((n,), -1, dtype=torch.long, device=device)
        # one query each, always
        self.cu_seqlens_q = torch.arange(n + 1, dtype=torch.int32, device=device)
        self.seq_lens = torch.ones(n, dtype=torch.int32, device=device)
        self.block_tables = torch.zeros((n, max_blocks), dtype=torch.int32,
                                        device=device)
        self.graphs, self.outputs, self.pool = {}, {}, None

    def close(self):
        """Drop the graphs, their memory pool and the static buffers, then the model."""
        self.graphs, self.outputs, self.pool = {}, {}, None
        self.input_ids = self.positions = self.slot_mapping = None
        self.cu_seqlens_q = self.seq_lens = self.block_tables = None
        super().close()

    def execute(self, input_ids, positions, attn, sample_rows):
        if getattr(attn, "max_query_len", None) != 1:      # not a decode step
            return super().execute(input_ids, positions, attn, sample_rows)
        if self.capture and not self.graphs:
            for bucket in reversed(self.buckets):
                self.record(bucket, attn)
        n = input_ids.shape[0]
        bucket = next(b for b in self.buckets if b >= n)
        self.fill(n, bucket, input_ids, positions, attn)
        if self.capture:
            self.graphs[bucket].replay()                   # one call for every launch
            hidden = self.outputs[bucket]
        else:
            hidden = self.forward(bucket, attn)
        return self.model.compute_logits(hidden[:n][sample_rows])

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

    def forward(self, bucket, attn):
        """The model on the first ``bucket`` rows of the static buffers: the
        step's attention metadata (its caches, kernels and block size), with
        its tensors swapped for views of the buffers."""
        on_buffers = dataclasses.replace(
            attn, slot_mapping=self.slot_mapping[:bucket],
            cu_seqlens_q=self.cu_seqlens_q[:bucket + 1],
            seq_lens=self.seq_lens[:bucket], block_tables=self.block_tables[:bucket])
        return self.model(self.input_ids[:bucket], self.positions[:bucket], on_buffers)

    def record(self, bucket, attn):
        """Run once outside the graph (Triton compiles, allocations settle), then
        capture."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self.forward(bucket, attn)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool):
            self.outputs[bucket] = self.forward(bucket, attn)
        # every bucket shares one memory pool
        self.pool = graph.pool()
        self.graphs[bucket] = graph
# ANCHOR_END: graph_executor
