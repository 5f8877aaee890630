"""Stages 4 and 5: iteration-level scheduling (Orca's idea), and the step it drives.

The scheduler runs before every forward pass and decides which requests run and how many of
their tokens each computes. A request's uncomputed tokens are its whole
prompt when it is admitted, one token per step while it decodes, a slice of
its prompt under chunked prefill, and, in stage 5, everything again after a
preemption: one rule, "compute the next n tokens whose K/V are not cached",
covers all.

Room is a free place among the running requests (``max_num_seqs``), token
budget (``max_num_batched_tokens``) and KV memory, which ``kv`` decides: the
stage's KV manager (``can_allocate``, ``allocate``, ``free``). A running
request's slot always has room; stage 5's blocks can run out, and its
scheduler (``PagedScheduler``) then preempts. The scheduler is pure
bookkeeping: no model, no tensors, so tests drive it directly.

``IterationEngine`` is the step both stages share: schedule, pack the chosen
tokens into one ragged batch, run the model once, sample, hand out the
tokens. A stage says only where K/V live.
"""
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from ..config import EngineConfig
from ..observer import StepOutcome
from ..request import Request
from .base import Engine, read_tokens


@dataclass
class ScheduledBatch:
    """One step's plan: which requests run, and how many tokens each computes."""
    entries: list[tuple[Request, int]] = field(default_factory=list)   # (request, tokens to compute)

    def __post_init__(self):
        self.requests = [r for r, _ in self.entries]
        self.num_tokens = sum(n for _, n in self.entries)
        # A prefill is anything but one generated token: a prompt, part of one, or a recompute.
        prefills = sum(n > 1 or r.num_computed_tokens < len(r.prompt_token_ids) for r, n in self.entries)
        self.kind = "prefill" if prefills == len(self.entries) else "decode" if prefills == 0 else "mixed"


# ANCHOR: scheduler
class Scheduler:
    def __init__(self, config: EngineConfig, kv):
        self.config = config
        self.kv = kv
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []          # in admission order
        self.steps_since_admission = 0

    def schedule(self) -> ScheduledBatch:
        budget = self.config.max_num_batched_tokens
        if self.config.scheduling_policy == "prefill_first":
            admitted = self.admit(budget)          # new prompts get a step of their own
            return ScheduledBatch(admitted or self.schedule_running(budget))
        running = self.schedule_running(budget)
        budget -= sum(n for _, n in running)
        return ScheduledBatch(running + self.admit(budget))

    def schedule_running(self, budget) -> list[tuple[Request, int]]:
        """Every running request computes its next tokens: one to decode, or
        its prompt's next chunk. Its slot has room for them."""
        entries = []
        for request in self.running:
            n = self.tokens_to_compute(request, budget)
            if n > 0:
                self.kv.allocate(request, request.num_computed_tokens + n)
                entries.append((request, n))
                budget -= n
        return entries

    # ANCHOR_END: scheduler

    # ANCHOR: admit
    def admit(self, budget) -> list[tuple[Request, int]]:
        """First come, first served: admit from the head of the queue while the
        head fits; never skip it (so no request waits forever)."""
        if not self.admission_open():
            return []
        admitted = []
        while self.waiting and len(self.running) < self.config.max_num_seqs:
            request = self.waiting[0]
            n = self.reserve(request, budget)
            if n == 0:
                break
            self.running.append(self.waiting.popleft())
            admitted.append((request, n))
            budget -= n
        return admitted
    # ANCHOR_END: admit

    # ANCHOR: chunking
    def reserve(self, request, budget) -> int:
        """How many tokens a request being admitted computes this step, with the
        KV memory for them allocated; 0 if they do not fit."""
        n = self.tokens_to_compute(request, budget)
        if n == 0 or not self.kv.can_allocate(request, request.num_computed_tokens + n):
            return 0
        self.kv.allocate(request, request.num_computed_tokens + n)
        return n

    def tokens_to_compute(self, request, budget) -> int:
        """How many of the request's uncomputed tokens (its prompt and output so
        far, less what is cached) run this step."""
        remaining = len(request.all_token_ids) - request.num_computed_tokens
        return self.fit(remaining, budget)

    def fit(self, remaining, budget) -> int:
        """All remaining tokens, or with chunked prefill as many as the budget
        allows; 0 if they do not fit this step."""
        # More tokens than any one step holds (a prompt and output recomputed after a
        # preemption, in stage 5) run in chunks too: else they would wait forever.
        if self.config.enable_chunked_prefill or \
                remaining > self.config.max_num_batched_tokens:
            return min(remaining, budget)
        return remaining if remaining <= budget else 0
    # ANCHOR_END: chunking

    # ANCHOR: admission_open
    def admission_open(self) -> bool:
        """The rescheduling knobs: admit every schedule_interval steps, and only
        when enough requests wait. With nothing running, always admit."""
        self.steps_since_admission += 1
        is_open = not self.running or (
            self.steps_since_admission >= self.config.schedule_interval
            and len(self.waiting)
            >= self.config.waiting_served_ratio * len(self.running))
        if is_open:
            self.steps_since_admission = 0
        return is_open
    # ANCHOR_END: admission_open

    @contextmanager
    def undone_on_error(self, batch: ScheduledBatch):
        """If the step raises, it never happened: its requests count none of its
        tokens as computed, so the next step schedules them again."""
        computed = [(request, request.num_computed_tokens) for request in batch.requests]
        try:
            yield
        except BaseException:
            for request, n in computed:
                request.num_computed_tokens = n
            raise

    def advance(self, batch: ScheduledBatch):
        """The forward pass is launched: the scheduled tokens count as cached."""
        for request, n in batch.entries:
            request.num_computed_tokens += n

    def finish(self, request: Request):
        """A request finished or was aborted: its memory is free at once."""
        if request in self.running:
            self.running.remove(request)
            self.kv.free(request)


@dataclass
class LaunchedStep:
    """A forward pass on its way: what ran, and who gets its tokens."""
    batch: ScheduledBatch
    sampled: list                   # the requests that get a token from it
    outcome: StepOutcome            # for the step log, as the step ran


# ANCHOR: iteration_engine
class IterationEngine(Engine):
    """Stages 4-5: the scheduler runs before every forward pass (Orca's
    iteration-level scheduling), and the step packs whatever it chose into one
    ragged batch. A stage says where K/V live: its KV manager
    (``make_kv_manager``) and the attention metadata that layout implies
    (``attention_metadata``)."""
    scheduler_class = Scheduler

    def __init__(self, executor, config):
        super().__init__(executor, config)
        self.kv = self.make_kv_manager()
        self.scheduler = self.scheduler_class(self.config, self.kv)
        # add_request/abort use the scheduler's queue.
        self.waiting = self.scheduler.waiting

    def close(self):
        """Drop the KV cache, which lives as long as the engine."""
        self.k_cache = self.v_cache = None

    def run_step(self):
        batch = self.scheduler.schedule()
        if not batch.entries:
            return []
        with self.scheduler.undone_on_error(batch):
            step, logits = self.launch(batch)
            tokens = self.sampler(logits, [r.params for r in step.sampled],
                                  [r.generator for r in step.sampled])
        return self.finish_step(step, read_tokens(tokens))

    def launch(self, batch):
        """Build the step's inputs and run the forward pass. Returns the step and
        the logits of the requests that sample in it."""
        now = self.clock()
        for request in batch.requests:
            if request.metrics.first_scheduled_time is None:
                request.metrics.first_scheduled_time = now
        ids, positions, attn, sampled, sample_rows = self.prepare(batch)
        logits = self.executor.execute(ids, positions, attn, self.tensor(sample_rows))
        self.scheduler.advance(batch)
        return LaunchedStep(batch, sampled, self.outcome(batch)), logits

    def finish_step(self, step, tokens) -> list:
        """The step's tokens are on the host: hand them out, report the step,
        and free the memory of the requests that finished."""
        delivered = self.deliver(step.sampled, tokens)
        self.log.report(step.outcome)
        for request in step.batch.requests:
            if request.finished:
                self.scheduler.finish(request)   # its memory is free for the next step
        return delivered

    def release(self, request):
        self.scheduler.finish(request)

    def prepare(self, batch):
        """Pack every scheduled request's new tokens into one flat batch. Also
        returns the requests that sample a token from it, and their rows."""
        ids, positions, slot_mapping, cu_seqlens, seq_lens = [], [], [], [0], []
        sampled, sample_rows = [], []
        for request, n in batch.entries:
            start = request.num_computed_tokens     # position of the first new token
            ids += request.all_token_ids[start:start + n]
            positions += range(start, start + n)
            slot_mapping += self.kv.cache_rows(request, start, n)
            cu_seqlens.append(cu_seqlens[-1] + n)
            seq_lens.append(start + n)
            # Its last token's logits give the next token (not a partial chunk's).
            if start + n == len(request.all_token_ids):
                sampled.append(request)
                sample_rows.append(cu_seqlens[-1] - 1)
        t = self.tensor
        attn = self.attention_metadata(
            batch, t(slot_mapping), t(cu_seqlens, torch.int32),
            t(seq_lens, torch.int32), max(n for _, n in batch.entries))
        return t(ids), t(positions), attn, sampled, sample_rows
# ANCHOR_END: iteration_engine

    def check_request(self, request, label):
        if len(request.prompt_token_ids) > self.config.max_num_batched_tokens and \
                not self.config.enable_chunked_prefill:
            raise ValueError(f"{label}: prompt of {len(request.prompt_token_ids)} tokens exceeds "
                             f"max_num_batched_tokens {self.config.max_num_batched_tokens}")

    def make_kv_manager(self):
        raise NotImplementedError

    def attention_metadata(self, batch, slot_mapping, cu_seqlens_q, seq_lens, max_query_len):
        raise NotImplementedError

    def outcome(self, batch) -> StepOutcome:
        """What the step ran, as it ran: one batch row per request it advanced,
        out of max_num_seqs, and the KV memory each running request holds."""
        rows = [r.request_id for r in batch.requests]
        rows += [None] * (self.config.max_num_seqs - len(rows))
        held = [(r.request_id, r.num_computed_tokens, self.kv.tokens_held(r))
                for r in self.scheduler.running]
        return StepOutcome(batch.kind, rows, batch.num_tokens, held,
                           self.kv.tokens_reserved())
