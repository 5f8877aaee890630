"""Stage 4: continuous batching (iteration-level scheduling, as in Orca).

Stages 1-3 schedule a batch once and run it to the end. Here the scheduler
runs before *every* forward pass: finished requests leave at once, and
waiting requests take their place in the very next step. No row ever
computes for a request that is done, and a short request never waits for a
long one.

Each step is one **ragged** batch: the prompts of newly admitted requests
and one token of every running request, packed into one flat tensor with no
padding; ``cu_seqlens_q`` says where each request's tokens start. The step
itself (schedule, pack, run, sample) is ``IterationEngine`` in ``iteration.py``,
which stage 5 shares; this file says where the K/V live.

The KV cache is still reserved per request: ``max_num_seqs`` slots of
``max_model_len`` tokens each, whatever a request will actually use. Stage 5
removes that waste.
"""
from collections import deque
from dataclasses import dataclass

import torch

from .iteration import IterationEngine


# ANCHOR: kv_manager
class SlotManager:
    """The KV memory of stage 4: ``num_slots`` slots of ``max_model_len``
    tokens, one per running request, taken whole at admission."""

    def __init__(self, num_slots: int, max_model_len: int):
        self.free_slots = deque(range(num_slots))
        # request -> its slot (keyed by the request, not its id)
        self.slot_of: dict[object, int] = {}
        self.max_model_len = max_model_len

    def can_allocate(self, request, num_tokens) -> bool:
        return request in self.slot_of or bool(self.free_slots)

    def allocate(self, request, num_tokens):
        if request not in self.slot_of:
            self.slot_of[request] = self.free_slots.popleft()

    def free(self, request):
        self.free_slots.append(self.slot_of.pop(request))

    def cache_rows(self, request, start, count) -> range:
        """Where tokens start..start+count of the request live in the cache."""
        base = self.slot_of[request] * self.max_model_len
        return range(base + start, base + start + count)
# ANCHOR_END: kv_manager

    # For the step log: token slots held, used or not.
    def tokens_held(self, request) -> int:
        return self.max_model_len

    def tokens_reserved(self) -> int:
        return len(self.slot_of) * self.max_model_len


# ANCHOR: attention_batch
@dataclass
class RaggedBatch:
    """One step's attention metadata; the model calls it once per layer."""
    k_cache: torch.Tensor           # [layers, slots * max_model_len, KVH, d]
    v_cache: torch.Tensor
    ops: object
    slot_mapping: torch.Tensor      # [N]: the cache row each new token's K/V goes to
    cu_seqlens_q: torch.Tensor      # [S + 1]: request s owns packed rows cu[s]:cu[s+1]
    # [S]: tokens in each request's context, new ones included
    seq_lens: torch.Tensor
    seq_starts: torch.Tensor        # [S]: the cache row of each request's token 0
    max_query_len: int

    def __call__(self, layer, q, k, v):            # q [N, H, d]; k, v [N, KVH, d]
        self.ops.store_kv_cache(k, v, self.k_cache[layer], self.v_cache[layer],
                                self.slot_mapping)
        return self.ops.ragged_attention(
            q, self.k_cache[layer], self.v_cache[layer], self.cu_seqlens_q,
            self.seq_lens, self.seq_starts, self.max_query_len)
# ANCHOR_END: attention_batch


# ANCHOR: engine
class ContinuousEngine(IterationEngine):
    name = "continuous"

    def make_kv_manager(self):
        cfg = self.config
        self.k_cache, self.v_cache = self.new_kv_cache(
            cfg.max_num_seqs * cfg.max_model_len)
        return SlotManager(cfg.max_num_seqs, cfg.max_model_len)

    def attention_metadata(self, batch, slot_mapping, cu_seqlens_q, seq_lens,
                           max_query_len):
        seq_starts = [self.kv.slot_of[r] * self.config.max_model_len
                      for r in batch.requests]
        return RaggedBatch(self.k_cache, self.v_cache, self.ops, slot_mapping,
                           cu_seqlens_q, seq_lens,
                           self.tensor(seq_starts, torch.int32), max_query_len)
# ANCHOR_END: engine
