"""Stage 5: continuous batching over a paged KV cache (PagedAttention, vLLM).

Stage 4 with its slots replaced by blocks. A request no longer reserves
``max_model_len`` tokens when it starts: the block manager hands it a block
of ``block_size`` tokens whenever its last block fills up. The memory a slot
wasted on tokens a request would never produce now holds other requests, so
more run at once.

Like an operating system's pages: the cache is ``num_blocks`` blocks of
``block_size`` tokens; each sequence has a block table listing the physical
blocks that hold its tokens, in order. A sequence takes a new block only
when its last one is full, so at most ``block_size - 1`` slots per sequence
are ever empty, and any free block serves any sequence.

When the cache is full and a running request needs a block, the scheduler
preempts the most recently admitted request (its blocks are freed; it is
recomputed later). With ``enable_chunked_prefill`` long prompts run in
chunks beside the decodes. Requests that start with the same tokens can
share those blocks (``enable_prefix_caching``): ``prefix_caching.py`` builds
that on this file.
"""
import math
from collections import deque
from dataclasses import dataclass

import torch

from .. import gpu_memory
from ..attention import rows
from ..request import Request
from ..sampling_params import SamplingParams
from .iteration import IterationEngine, Scheduler


# ANCHOR: kv_manager
class BlockManager:
    """Stage 5's KV memory: fixed-size blocks handed out as sequences grow."""

    def __init__(self, num_blocks: int, block_size: int):
        self.num_blocks, self.block_size = num_blocks, block_size
        self.free_blocks = deque(range(num_blocks))
        # Keyed by the request itself, not its id: a finished request's id may be
        # given to a new one while the old one's last step is still being read back.
        self.block_tables: dict[object, list[int]] = {}  # request -> physical blocks

    def blocks_for(self, num_tokens: int) -> int:
        return math.ceil(num_tokens / self.block_size)

    def can_allocate(self, request, num_tokens) -> bool:
        """Could the request hold num_tokens tokens after this call to allocate?"""
        held = len(self.block_tables.get(request, []))
        return self.blocks_for(num_tokens) - held <= len(self.free_blocks)

    def free(self, request):
        self.free_blocks.extend(self.block_tables.pop(request))
    # ANCHOR_END: kv_manager

    # ANCHOR: allocate
    def allocate(self, request, num_tokens):
        """Grow the request's block table to cover num_tokens tokens."""
        table = self.block_tables.setdefault(request, [])
        while len(table) < self.blocks_for(num_tokens):
            table.append(self.free_blocks.popleft())

    # ANCHOR_END: allocate

    # ANCHOR: cache_rows
    def cache_rows(self, request, start, count) -> list[int]:
        """Cache rows (block * block_size + offset) of tokens start..start+count."""
        table, size = self.block_tables[request], self.block_size
        return [table[p // size] * size + p % size for p in range(start, start + count)]
    # ANCHOR_END: cache_rows

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - len(self.free_blocks)

    # For the step log: token slots held, used or not.
    def tokens_held(self, request) -> int:
        return len(self.block_tables[request]) * self.block_size

    def tokens_reserved(self) -> int:
        return self.num_used_blocks * self.block_size      # each block once


# ANCHOR: preempt
class PagedScheduler(Scheduler):
    """The scheduler of stages 4-5, for blocks, which can run out: a running
    request that needs a block when none is free makes room by preempting the
    most recently admitted request (chapter 6)."""

    def __init__(self, config, kv):
        super().__init__(config, kv)
        self.num_preemptions = 0
        self.preempted = False             # in this step's schedule_running

    def schedule_running(self, budget) -> list[tuple[Request, int]]:
        """Chapter 4's loop, but a request the free blocks cannot hold first
        makes room: the newest running request is preempted until it fits, or
        until it is itself the one preempted."""
        entries, self.preempted, preempted = [], False, set()
        # (a set: asking the running list whether it still holds each request
        # would cost a pass over the list per request, a step's largest host cost)
        for request in list(self.running):
            if request in preempted:
                continue                           # preempted earlier in this loop
            n = self.tokens_to_compute(request, budget)
            if n == 0:
                continue
            while not self.kv.can_allocate(request, request.num_computed_tokens + n):
                preempted.add(self.running[-1])
                self.preempt(self.running[-1])
                if request in preempted:
                    break
            else:
                self.kv.allocate(request, request.num_computed_tokens + n)
                entries.append((request, n))
                budget -= n
        return entries

    def preempt(self, request: Request):
        """Preemption by recomputation: drop the request's KV and put it back
        at the head of the queue. Its tokens so far are kept; when it is
        admitted again, prompt and output are recomputed in one prefill."""
        self.running.remove(request)
        self.kv.free(request)
        request.num_computed_tokens = 0
        request.num_preemptions += 1
        self.num_preemptions += 1
        self.preempted = True
        self.waiting.appendleft(request)
# ANCHOR_END: preempt

    def admission_open(self) -> bool:
        # Memory ran out in this step (the mixed policy schedules the running requests
        # first): admitting now would only preempt again.
        if self.preempted and self.config.scheduling_policy == "mixed":
            return False
        return super().admission_open()


# ANCHOR: attention_batch
@dataclass
class PagedBatch:
    """Stage 4's RaggedBatch, with block tables where it had slot starts."""
    k_cache: torch.Tensor           # [layers, num_blocks * block_size, KVH, d]
    v_cache: torch.Tensor
    ops: object
    # [N]: block * block_size + offset of each new token
    slot_mapping: torch.Tensor = rows("slots")
    cu_seqlens_q: torch.Tensor = rows("boundaries")     # [S + 1]
    seq_lens: torch.Tensor = rows("lengths")            # [S]
    # [S, max blocks]: each request's physical blocks, in order
    block_tables: torch.Tensor = rows("tables", keys_per_column="block_size")
    block_size: int
    max_query_len: int

    def __call__(self, layer, q, k, v):
        self.ops.store_kv_cache(k, v, self.k_cache[layer], self.v_cache[layer],
                                self.slot_mapping)
        return self.ops.paged_attention(
            q, self.k_cache[layer], self.v_cache[layer], self.cu_seqlens_q,
            self.seq_lens, self.block_tables, self.block_size, self.max_query_len)
# ANCHOR_END: attention_batch


# ANCHOR: engine
class PagedEngine(IterationEngine):
    name = "paged"
    scheduler_class = PagedScheduler

    def make_kv_manager(self):
        cfg = self.config
        self.num_blocks = cfg.num_blocks or self.blocks_in_budget()
        self.k_cache, self.v_cache = self.new_kv_cache(self.num_blocks * cfg.block_size)
        return BlockManager(self.num_blocks, cfg.block_size)

    def attention_metadata(self, batch, slot_mapping, cu_seqlens_q, seq_lens,
                           max_query_len):
        tables = [self.kv.block_tables[r] for r in batch.requests]
        width = max(len(t) for t in tables)
        block_tables = self.tensor([t + [0] * (width - len(t)) for t in tables],
                                   torch.int32)
        return PagedBatch(self.k_cache, self.v_cache, self.ops, slot_mapping,
                          cu_seqlens_q, seq_lens, block_tables,
                          self.config.block_size, max_query_len)
# ANCHOR_END: engine

    def check_request(self, request, label):
        super().check_request(request, label)
        tokens = len(request.prompt_token_ids) + request.params.max_tokens
        needed = self.kv.blocks_for(tokens)
        if needed > self.num_blocks:
            raise ValueError(f"{label}: prompt of {len(request.prompt_token_ids)} tokens + max_tokens "
                             f"{request.params.max_tokens} needs {needed} blocks of {self.config.block_size} "
                             f"tokens, but the KV cache has only {self.num_blocks}")

    def blocks_in_budget(self) -> int:
        cfg, model_cfg = self.config, self.executor.config
        bytes_per_block = cfg.block_size * model_cfg.kv_bytes_per_token(self.executor.dtype.itemsize)
        budget = self.kv_budget_bytes()
        if budget is None and gpu_memory.CUDA.is_gpu(self.device):
            budget = self.gpu_memory_left()
        elif budget is None:                    # the same memory stage 4's slots take
            budget = cfg.max_num_seqs * cfg.max_model_len * bytes_per_block / cfg.block_size
        if budget < bytes_per_block:
            raise ValueError(f"a KV budget of {int(budget)} bytes holds no block of {bytes_per_block} bytes")
        return int(budget // bytes_per_block)

    def gpu_memory_left(self) -> int:
        """What gpu_memory_utilization leaves the KV cache once this engine's
        weights and one profiled step at its peak are counted (minicb.gpu_memory)."""
        weights = self.executor.weight_bytes()       # None: in tensor-parallel workers
        with gpu_memory.StepPeak(self.device) as step:
            if weights is not None:
                self.profile_step()
        return gpu_memory.kv_cache_bytes(self.device, self.config.gpu_memory_utilization, weights, step)

    def profile_step(self):
        """The most memory a step takes beside the KV cache: the largest prefill
        the token budget allows (attention left out: the kernels keep no
        [tokens, tokens] scores) and sampling max_num_seqs rows."""
        cfg = self.config
        n = cfg.max_num_batched_tokens
        positions = torch.arange(n, device=self.device) % cfg.max_model_len
        sample_rows = torch.arange(cfg.max_num_seqs, device=self.device)
        logits = self.executor.profile_step(positions, sample_rows)
        sampled = [SamplingParams(temperature=1.0, top_k=50, top_p=0.9)] * len(logits)
        self.sampler(logits, sampled, [None] * len(logits))

