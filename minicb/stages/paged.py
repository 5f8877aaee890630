"""Stage 5: continuous batching over a paged KV cache (PagedAttention, vLLM).

Stage 4 with its slots replaced by blocks. A request no longer reserves
``max_model_len`` tokens when it starts: the block manager hands it a block
of ``block_size`` tokens whenever its last block fills up. The memory a slot
wasted on tokens a request would never produce now holds other requests, so
more run at once.

When the cache is full and a running request needs a block, the scheduler
preempts the most recently admitted request (its blocks are freed; it is
recomputed later). With ``enable_chunked_prefill`` long prompts run in
chunks beside the decodes; with ``enable_prefix_caching`` requests that start
with the same tokens share those blocks.
"""
from dataclasses import dataclass
from functools import partial

import torch

from ..block_manager import BlockManager
from ..cuda_graphs import DecodeGraphs
from .continuous import ContinuousEngine


# ANCHOR: paged_batch
@dataclass
class PagedBatch:
    """Stage 4's RaggedBatch, with block tables where it had slot starts."""
    k_cache: torch.Tensor           # [layers, num_blocks * block_size, KVH, d]
    v_cache: torch.Tensor
    ops: object
    slot_mapping: torch.Tensor      # [N]: block * block_size + offset of each new token
    cu_seqlens_q: torch.Tensor      # [S + 1]
    seq_lens: torch.Tensor          # [S]
    block_tables: torch.Tensor      # [S, max blocks]: each request's physical blocks, in order
    block_size: int
    max_query_len: int

    def __call__(self, layer, q, k, v):
        self.ops.store_kv_cache(k, v, self.k_cache[layer], self.v_cache[layer], self.slot_mapping)
        return self.ops.paged_attention(q, self.k_cache[layer], self.v_cache[layer], self.cu_seqlens_q,
                                        self.seq_lens, self.block_tables, self.block_size,
                                        self.max_query_len)
# ANCHOR_END: paged_batch


def decode_batch(k_cache, v_cache, ops, block_size, slot_mapping, cu_seqlens_q, seq_lens, block_tables):
    """A PagedBatch of decode steps (one query per sequence), for the CUDA graphs."""
    return PagedBatch(k_cache, v_cache, ops, slot_mapping, cu_seqlens_q, seq_lens, block_tables, block_size, 1)


# ANCHOR: engine
class PagedEngine(ContinuousEngine):
    name = "paged"

    def make_kv_manager(self):
        cfg = self.config
        self.num_blocks = cfg.num_blocks or self.blocks_in_budget()
        self.k_cache, self.v_cache = self.new_kv_cache(self.num_blocks * cfg.block_size)
        self.decode_graphs = self.make_decode_graphs(capture=True) if cfg.cuda_graphs else None
        return BlockManager(self.num_blocks, cfg.block_size, cfg.enable_prefix_caching)

    def attention_metadata(self, batch, slot_mapping, cu_seqlens_q, seq_lens, max_query_len):
        tables = [self.kv.block_tables[r] for r in batch.requests]
        width = max(len(t) for t in tables)
        block_tables = self.tensor([t + [0] * (width - len(t)) for t in tables], torch.int32)
        return PagedBatch(self.k_cache, self.v_cache, self.ops, slot_mapping, cu_seqlens_q, seq_lens,
                          block_tables, self.config.block_size, max_query_len)
# ANCHOR_END: engine

    def forward(self, kind, ids, positions, attn):
        if kind == "decode" and self.decode_graphs is not None:
            return self.decode_graphs(ids, positions, attn)         # one replay instead of every launch
        return self.model(ids, positions, attn)

    def make_decode_graphs(self, capture) -> DecodeGraphs:
        cfg = self.config
        # A partial, not a closure over self: the graphs must not keep the engine (and
        # its KV cache) alive after the engine is dropped.
        make_attention = partial(decode_batch, self.k_cache, self.v_cache, self.ops, cfg.block_size)
        max_blocks = -(-cfg.max_model_len // cfg.block_size)
        return DecodeGraphs(self.model, make_attention, cfg.max_num_seqs, max_blocks, self.k_cache.device, capture)

    def check_request(self, request, label):
        super().check_request(request, label)
        tokens = len(request.prompt_token_ids) + request.params.max_tokens
        needed = self.kv.blocks_for(tokens)
        if needed > self.num_blocks:
            raise ValueError(f"{label}: prompt of {len(request.prompt_token_ids)} tokens + max_tokens "
                             f"{request.params.max_tokens} needs {needed} blocks of {self.config.block_size} "
                             f"tokens, but the KV cache has only {self.num_blocks}")

    def blocks_in_budget(self) -> int:
        cfg, model_cfg = self.config, self.model.config
        bytes_per_block = cfg.block_size * model_cfg.kv_bytes_per_token(self.model.embed_tokens.weight.element_size())
        if cfg.kv_cache_memory_bytes is not None:
            budget = cfg.kv_cache_memory_bytes
        elif str(cfg.device).startswith("cuda"):
            budget = torch.cuda.mem_get_info()[0] * cfg.kv_cache_memory_fraction
        else:                                   # the same memory stage 4's slots take
            budget = cfg.max_num_seqs * cfg.max_model_len * bytes_per_block / cfg.block_size
        if budget < bytes_per_block:
            raise ValueError(f"a KV budget of {int(budget)} bytes holds no block of {bytes_per_block} bytes")
        return int(budget // bytes_per_block)

    def batch_rows(self, batch) -> list:
        ids = [r.request_id for r in batch.requests]    # no slots: rows are the step's requests
        return ids + [None] * (self.config.max_num_seqs - len(ids))

    def kv_held(self, request) -> int:
        return len(self.kv.block_tables[request]) * self.config.block_size

    def kv_reserved(self) -> int:
        return self.kv.num_used_blocks * self.config.block_size     # shared blocks count once
