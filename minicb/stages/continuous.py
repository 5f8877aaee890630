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

The KV cache is still reserved per request, as one contiguous slot taken
whole at admission: by default ``max_model_len`` tokens, whatever a request
will actually use (``kv_reservation`` sizes it closer, as chapter 11 does).
Stage 5 removes that waste.
"""
from dataclasses import dataclass

import torch

from ..attention import rows
from .iteration import IterationEngine


# ANCHOR: kv_manager
class SlotManager:
    """The KV memory of stage 4: ``capacity`` token rows, from which each
    running request takes one contiguous slot at admission, sized by the
    ``reservation`` policy, and keeps it whole until it ends."""

    def __init__(self, capacity: int, max_model_len: int, reservation: str = "max"):
        self.capacity, self.max_model_len = capacity, max_model_len
        self.reservation = reservation
        self.holes = [range(0, capacity)]      # free runs of rows, in address order
        # request -> its slot's rows (keyed by the request, not its id)
        self.slot_of: dict[object, range] = {}

    def can_allocate(self, request, num_tokens) -> bool:
        return request in self.slot_of or self.first_fit(request) is not None

    def allocate(self, request, num_tokens):
        if request not in self.slot_of:
            i, size = self.first_fit(request), self.slot_size(request)
            hole = self.holes[i]
            self.slot_of[request] = hole[:size]
            self.holes[i:i + 1] = [hole[size:]] if len(hole) > size else []

    def free(self, request):
        self.holes = merged(sorted(self.holes + [self.slot_of.pop(request)],
                                   key=lambda hole: hole.start))

    def cache_rows(self, request, start, count) -> range:
        """Where tokens start..start+count of the request live in the cache."""
        return self.slot_of[request][start:start + count]
    # ANCHOR_END: kv_manager

    # ANCHOR: first_fit
    def first_fit(self, request) -> int | None:
        """The first hole the request's slot fits in. Free rows split among
        holes too small for it are what the vLLM paper calls external
        fragmentation."""
        size = self.slot_size(request)
        return next((i for i, hole in enumerate(self.holes) if len(hole) >= size), None)
    # ANCHOR_END: first_fit

    # ANCHOR: slot_size
    def slot_size(self, request) -> int:
        """Rows a request's slot reserves. It will write the K/V of its prompt
        and of every output token but the last (sampled, never fed back)."""
        needed = len(request.prompt_token_ids) + request.params.max_tokens - 1
        if self.reservation == "oracle":
            return needed
        if self.reservation == "pow2":
            return min(1 << (needed - 1).bit_length(), self.max_model_len)
        return self.max_model_len
    # ANCHOR_END: slot_size

    # For the step log: token slots held, used or not.
    def tokens_held(self, request) -> int:
        return len(self.slot_of[request])

    def tokens_reserved(self) -> int:
        return sum(len(slot) for slot in self.slot_of.values())


def merged(holes: list[range]) -> list[range]:
    """Holes in address order, each joined to the next where they touch."""
    joined = holes[:1]
    for hole in holes[1:]:
        if joined[-1].stop == hole.start:
            joined[-1] = range(joined[-1].start, hole.stop)
        else:
            joined.append(hole)
    return joined


# ANCHOR: attention_batch
@dataclass
class RaggedBatch:
    """One step's attention metadata; the model calls it once per layer."""
    k_cache: torch.Tensor           # [layers, slots * max_model_len, KVH, d]
    v_cache: torch.Tensor
    ops: object
    # [N]: the cache row each new token's K/V goes to
    slot_mapping: torch.Tensor = rows("slots")
    # [S + 1]: request s owns packed rows cu[s]:cu[s+1]
    cu_seqlens_q: torch.Tensor = rows("boundaries")
    # [S]: tokens in each request's context, new ones included
    seq_lens: torch.Tensor = rows("lengths")
    # [S]: the cache row of each request's token 0
    seq_starts: torch.Tensor = rows("sequences")
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
        rows = self.kv_rows()
        self.k_cache, self.v_cache = self.new_kv_cache(rows)
        return SlotManager(rows, self.config.max_model_len, self.config.kv_reservation)

    def attention_metadata(self, batch, slot_mapping, cu_seqlens_q, seq_lens,
                           max_query_len):
        seq_starts = [self.kv.slot_of[r].start for r in batch.requests]
        return RaggedBatch(self.k_cache, self.v_cache, self.ops, slot_mapping,
                           cu_seqlens_q, seq_lens,
                           self.tensor(seq_starts, torch.int32), max_query_len)
# ANCHOR_END: engine

    def kv_rows(self) -> int:
        """Token rows in the cache: the KV budget's worth (kv_budget_bytes), else a
        full slot for each of max_num_seqs requests."""
        cfg, budget = self.config, self.kv_budget_bytes()
        if budget is None:
            return cfg.max_num_seqs * cfg.max_model_len
        bytes_per_token = self.executor.config.kv_bytes_per_token(self.executor.dtype.itemsize)
        return int(budget // bytes_per_token)

    def check_request(self, request, label):
        super().check_request(request, label)
        size = self.kv.slot_size(request)
        if size > self.kv.capacity:
            raise ValueError(f"{label}: a slot of {size} tokens (kv_reservation "
                             f"{self.config.kv_reservation!r}) does not fit the KV cache's "
                             f"{self.kv.capacity} tokens")
