"""The iteration-level scheduler of stages 4 and 5 (Orca's idea).

Before every forward pass it decides which requests run and how many of
their tokens each computes. A request's uncomputed tokens are its whole
prompt when it is admitted, one token per step while it decodes, a slice of
its prompt under chunked prefill, and everything again after a preemption:
one rule, "compute the next n tokens whose K/V are not cached", covers all.

Room is a free place among the running requests (``max_num_seqs``), token
budget (``max_num_batched_tokens``) and KV memory, which ``kv`` decides: the
stage's KV manager (``can_allocate``, ``allocate``, ``free``). Pure
bookkeeping: no model, no tensors, so tests drive it directly.
"""
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field

from .config import EngineConfig
from .request import Request


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
        self.num_preemptions = 0

    def schedule(self) -> ScheduledBatch:
        budget = self.config.max_num_batched_tokens
        if self.config.scheduling_policy == "prefill_first":
            admitted = self.admit(budget)          # new prompts get a step of their own
            return ScheduledBatch(admitted or self.schedule_running(budget))
        preemptions = self.num_preemptions
        running = self.schedule_running(budget)
        budget -= sum(n for _, n in running)
        # Memory ran out this step: admitting now would only preempt again.
        return ScheduledBatch(running + ([] if self.num_preemptions > preemptions else self.admit(budget)))

    def schedule_running(self, budget) -> list[tuple[Request, int]]:
        """Every running request computes its next tokens; if KV memory runs
        out, the most recently admitted request is preempted to make room."""
        entries = []
        for request in list(self.running):
            if request not in self.running:
                continue                           # preempted earlier in this loop
            n = self.tokens_to_compute(request, budget)
            if n == 0:
                continue
            while not self.kv.can_allocate(request, request.num_computed_tokens + n):
                self.preempt(self.running[-1])
                if request not in self.running:
                    break
            else:
                self.kv.allocate(request, request.num_computed_tokens + n)
                entries.append((request, n))
                budget -= n
        return entries

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

    def reserve(self, request, budget) -> int:
        """How many tokens a request being admitted computes this step, with the
        KV memory for them allocated; 0 if they do not fit."""
        n = self.tokens_to_compute(request, budget)
        if n == 0 or not self.kv.can_allocate(request, request.num_computed_tokens + n):
            return 0
        self.kv.allocate(request, request.num_computed_tokens + n)
        return n

    def num_tokens(self, request) -> int:
        """The tokens whose K/V the request needs: its prompt and its output so far."""
        return len(request.all_token_ids)

    def tokens_to_compute(self, request, budget) -> int:
        """All uncomputed tokens, or with chunked prefill as many as the
        budget allows; 0 if they do not fit this step."""
        remaining = self.num_tokens(request) - request.num_computed_tokens
        # The second case: a preempted request whose prompt + output outgrew any one
        # step. Without chunks it would wait forever.
        if self.config.enable_chunked_prefill or remaining > self.config.max_num_batched_tokens:
            return min(remaining, budget)
        return remaining if remaining <= budget else 0
# ANCHOR_END: scheduler

    def admission_open(self) -> bool:
        """The rescheduling knobs: admit every schedule_interval steps, and only
        when enough requests wait. With nothing running, always admit."""
        self.steps_since_admission += 1
        is_open = not self.running or (
            self.steps_since_admission >= self.config.schedule_interval
            and len(self.waiting) >= self.config.waiting_served_ratio * len(self.running))
        if is_open:
            self.steps_since_admission = 0
        return is_open

    # ANCHOR: preempt
    def preempt(self, request: Request):
        """Preemption by recomputation: drop the request's KV and put it back
        at the head of the queue. Its tokens so far are kept; when it is
        admitted again, prompt and output are recomputed in one prefill."""
        self.running.remove(request)
        self.kv.free(request)
        request.num_computed_tokens = 0
        request.num_preemptions += 1
        self.num_preemptions += 1
        self.waiting.appendleft(request)
    # ANCHOR_END: preempt

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
