"""Stage 4: continuous batching (iteration-level scheduling, as in Orca).

Stages 1-3 schedule a batch once and run it to the end. Here the scheduler
runs before *every* forward pass: finished requests leave at once, and
waiting requests take their place in the very next step. No row ever
computes for a request that is done, and a short request never waits for a
long one.

Each step is one **ragged** batch: the prompts of newly admitted requests
and one token of every running request, packed into one flat tensor with no
padding; ``cu_seqlens_q`` says where each request's tokens start.

The KV cache is still reserved per request: ``max_num_seqs`` slots of
``max_model_len`` tokens each, whatever a request will actually use. Stage 5
removes that waste.
"""
import time
from collections import deque
from dataclasses import dataclass

import torch

from ..scheduler import Scheduler
from .base import Engine


# ANCHOR: slots
class SlotManager:
    """The KV memory of stage 4: ``num_slots`` slots, one per running request."""

    def __init__(self, num_slots: int):
        self.free_slots = deque(range(num_slots))
        self.slot_of: dict[str, int] = {}

    def can_allocate(self, request) -> bool:
        return bool(self.free_slots)

    def allocate(self, request):
        self.slot_of[request.request_id] = self.free_slots.popleft()

    def free(self, request):
        self.free_slots.append(self.slot_of.pop(request.request_id))
# ANCHOR_END: slots


# ANCHOR: ragged_batch
@dataclass
class RaggedBatch:
    """One step's attention metadata; the model calls it once per layer."""
    k_cache: torch.Tensor           # [layers, slots * max_model_len, KVH, d]
    v_cache: torch.Tensor
    ops: object
    slot_mapping: torch.Tensor      # [N]: the cache row each new token's K/V goes to
    cu_seqlens_q: torch.Tensor      # [S + 1]: request s owns packed rows cu[s]:cu[s+1]
    seq_lens: torch.Tensor          # [S]: tokens in each request's context, new ones included
    seq_starts: torch.Tensor        # [S]: the cache row of each request's token 0
    max_query_len: int

    def __call__(self, layer, q, k, v):            # q [N, H, d]; k, v [N, KVH, d]
        self.ops.store_kv_cache(k, v, self.k_cache[layer], self.v_cache[layer], self.slot_mapping)
        return self.ops.ragged_attention(q, self.k_cache[layer], self.v_cache[layer], self.cu_seqlens_q,
                                         self.seq_lens, self.seq_starts, self.max_query_len)
# ANCHOR_END: ragged_batch


# ANCHOR: engine
class ContinuousEngine(Engine):
    name = "continuous"

    def __init__(self, model, config):
        super().__init__(model, config)
        self.kv = SlotManager(config.max_num_seqs)
        self.scheduler = Scheduler(config, self.kv)
        self.waiting = self.scheduler.waiting          # add_request/abort use the scheduler's queue
        self.k_cache, self.v_cache = self.new_kv_cache(config.max_num_seqs * config.max_model_len)

    def check_request(self, request, label):
        if len(request.prompt_token_ids) > self.config.max_num_batched_tokens:
            raise ValueError(f"{label}: prompt of {len(request.prompt_token_ids)} tokens exceeds "
                             f"max_num_batched_tokens {self.config.max_num_batched_tokens}")

    def step(self):
        batch = self.scheduler.schedule()
        if not batch.requests:
            return []
        started = time.perf_counter()
        for request in batch.prefills:
            request.metrics.first_scheduled_time = started
        ids, positions, attn, last_rows = self.prepare(batch)
        hidden = self.model(ids, positions, attn)
        kv_used = self.cached_tokens(batch)
        self.sample(batch.requests, hidden[last_rows])
        self.record_step(batch, kv_used, started)
        for request in batch.requests:
            if request.finished:
                self.scheduler.finish(request)       # its slot is free for the next step
        return batch.requests

    def release(self, request):
        self.scheduler.finish(request)

    def prepare(self, batch):
        """Pack every scheduled request's new tokens into one flat batch."""
        ids, positions, slot_mapping, cu_seqlens, seq_lens, seq_starts = [], [], [], [0], [], []
        for request, new in batch.new_tokens():
            start = request.num_tokens - len(new)               # position of the first new token
            base = self.kv.slot_of[request.request_id] * self.config.max_model_len
            ids += new
            positions += range(start, start + len(new))
            slot_mapping += range(base + start, base + start + len(new))
            cu_seqlens.append(cu_seqlens[-1] + len(new))
            seq_lens.append(start + len(new))
            seq_starts.append(base)
        t = self.tensor
        attn = RaggedBatch(self.k_cache, self.v_cache, self.ops, t(slot_mapping), t(cu_seqlens, torch.int32),
                           t(seq_lens, torch.int32), t(seq_starts, torch.int32),
                           max(b - a for a, b in zip(cu_seqlens, cu_seqlens[1:])))
        return t(ids), t(positions), attn, t(cu_seqlens[1:]) - 1    # last_rows: each request's last token
# ANCHOR_END: engine

    def cached_tokens(self, batch) -> int:
        """Tokens whose K/V are in the cache now. A running request that sat
        out this step (prefill_first) has not yet fed its newest token."""
        scheduled = set(batch.requests)
        return sum(r.num_tokens - (r not in scheduled) for r in self.scheduler.running)

    def record_step(self, batch, kv_used, started):
        rows = [None] * self.config.max_num_seqs                   # one row per slot
        for request in batch.requests:
            rows[self.kv.slot_of[request.request_id]] = request.request_id
        kind = "mixed" if batch.prefills and batch.decodes else "prefill" if batch.prefills else "decode"
        reserved = len(self.scheduler.running) * self.config.max_model_len   # whole slots, used or not
        self.record(kind, rows, batch.num_tokens, reserved, kv_used, started)
