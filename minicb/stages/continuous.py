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

from ..scheduler import ScheduledBatch, Scheduler
from .base import DeviceTimer, Engine


# ANCHOR: slots
class SlotManager:
    """The KV memory of stage 4: ``num_slots`` slots of ``max_model_len``
    tokens, one per running request, taken whole at admission."""

    def __init__(self, num_slots: int, max_model_len: int):
        self.free_slots = deque(range(num_slots))
        self.slot_of: dict[object, int] = {}           # request -> its slot (keyed by the request, not its id)
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

    def num_cached_tokens(self, request) -> int:
        return 0                                   # no prefix sharing in stage 4

    def computed(self, request):
        pass
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


@dataclass
class LaunchedStep:
    """A forward pass on its way: what ran, and what to log once its tokens are read."""
    batch: ScheduledBatch
    kind: str
    sampled: list                   # the requests that get a token from it
    started: float
    host_time: float
    forward_timer: DeviceTimer
    held: list                      # (request id, tokens cached, token slots held) after scheduling


# ANCHOR: engine
class ContinuousEngine(Engine):
    name = "continuous"

    def __init__(self, model, config):
        super().__init__(model, config)
        self.kv = self.make_kv_manager()
        self.scheduler = Scheduler(config, self.kv)
        self.waiting = self.scheduler.waiting          # add_request/abort use the scheduler's queue

    def make_kv_manager(self):
        cfg = self.config
        self.k_cache, self.v_cache = self.new_kv_cache(cfg.max_num_seqs * cfg.max_model_len)
        return SlotManager(cfg.max_num_seqs, cfg.max_model_len)

    def check_request(self, request, label):
        if len(request.prompt_token_ids) > self.config.max_num_batched_tokens and \
                not self.config.enable_chunked_prefill:
            raise ValueError(f"{label}: prompt of {len(request.prompt_token_ids)} tokens exceeds "
                             f"max_num_batched_tokens {self.config.max_num_batched_tokens}")

    def step(self):
        started = time.perf_counter()
        batch = self.scheduler.schedule()
        if not batch.entries:
            return []
        with self.scheduler.undone_on_error(batch):
            step, logits = self.launch(batch, started)
            tokens = self.sampler(logits, [r.params for r in step.sampled], [r.generator for r in step.sampled])
        return self.finish_step(step, tokens)

    def launch(self, batch, started):
        """Build the step's inputs and run the forward pass. Returns the step and
        the logits of the requests that sample in it."""
        for request in batch.requests:
            if request.metrics.first_scheduled_time is None:
                request.metrics.first_scheduled_time = started
        kind = batch.kind                                     # before the tokens count as computed
        ids, positions, attn, last_rows = self.prepare(batch)
        host_time = time.perf_counter() - started             # scheduling + building inputs
        with DeviceTimer(self.device) as forward_timer:
            hidden = self.forward(kind, ids, positions, attn)
        self.scheduler.advance(batch)
        # A request samples once all its tokens are computed (not after a partial prefill chunk).
        ready = [i for i, r in enumerate(batch.requests) if r.num_computed_tokens == r.num_tokens]
        held = [(r.request_id, r.num_computed_tokens, self.kv_held(r)) for r in self.scheduler.running]
        logits = self.model.compute_logits(hidden[self.tensor([last_rows[i] for i in ready])])
        step = LaunchedStep(batch, kind, [batch.requests[i] for i in ready], started, host_time, forward_timer, held)
        return step, logits

    def finish_step(self, step, tokens) -> list:
        """The step's tokens are on the host: hand them out, log the step, and
        free the memory of the requests that finished."""
        delivered = self.deliver(step.sampled, tokens)
        self.scheduler.publish(step.batch)
        self.record_step(step.batch, step.kind, step.held, step.started, step.host_time, step.forward_timer.seconds)
        for request in step.batch.requests:
            if request.finished:
                self.scheduler.finish(request)       # its memory is free for the next step
        return delivered

    def release(self, request):
        self.scheduler.finish(request)

    def forward(self, kind, ids, positions, attn):
        return self.model(ids, positions, attn)

    def prepare(self, batch):
        """Pack every scheduled request's new tokens into one flat batch."""
        ids, positions, slot_mapping, cu_seqlens, seq_lens = [], [], [], [0], []
        for request, new in batch.new_tokens():
            start = request.num_computed_tokens               # position of the first new token
            ids += new
            positions += range(start, start + len(new))
            slot_mapping += self.kv.cache_rows(request, start, len(new))
            cu_seqlens.append(cu_seqlens[-1] + len(new))
            seq_lens.append(start + len(new))
        t = self.tensor
        attn = self.attention_metadata(batch, t(slot_mapping), t(cu_seqlens, torch.int32),
                                       t(seq_lens, torch.int32), max(n for _, n in batch.entries))
        last_rows = [end - 1 for end in cu_seqlens[1:]]      # each request's last token
        return t(ids), t(positions), attn, last_rows

    def attention_metadata(self, batch, slot_mapping, cu_seqlens_q, seq_lens, max_query_len):
        seq_starts = [self.kv.slot_of[r] * self.config.max_model_len for r in batch.requests]
        return RaggedBatch(self.k_cache, self.v_cache, self.ops, slot_mapping, cu_seqlens_q, seq_lens,
                           self.tensor(seq_starts, torch.int32), max_query_len)
# ANCHOR_END: engine

    def record_step(self, batch, kind, held, started, host_time, forward_time):
        self.record(kind, self.batch_rows(batch), batch.num_tokens, held, started, kv_reserved=self.kv_reserved(),
                    host_time=host_time, forward_time=forward_time)

    def batch_rows(self, batch) -> list:
        """One row per sequence slot: the id of the request that ran in it, or None."""
        rows = [None] * self.config.max_num_seqs
        for request in batch.requests:
            rows[self.kv.slot_of[request]] = request.request_id     # stage 4: its slot
        return rows

    def kv_held(self, request) -> int:
        return self.config.max_model_len                           # a whole slot, used or not

    def kv_reserved(self) -> int:
        return len(self.scheduler.running) * self.config.max_model_len
