"""The iteration-level scheduler of stages 4 and 5 (Orca's idea).

Before every forward pass it decides which requests run: every running
request decodes one token, and waiting requests are admitted (their whole
prompt prefilled) while there is room. Room means a free sequence slot
(``max_num_seqs``), token budget (``max_num_batched_tokens``) and KV memory,
which ``kv`` (a slot manager in stage 4, a block manager in stage 5) decides.
Pure bookkeeping: no model, no tensors, so tests drive it directly.
"""
from collections import deque
from dataclasses import dataclass, field

from .config import EngineConfig
from .request import Request


@dataclass
class ScheduledBatch:
    prefills: list[Request] = field(default_factory=list)   # admitted this step: whole prompt
    decodes: list[Request] = field(default_factory=list)    # running: one token each

    @property
    def requests(self) -> list[Request]:
        return self.prefills + self.decodes

    def new_tokens(self) -> list[tuple[Request, list[int]]]:
        """Each scheduled request with the tokens it feeds this step."""
        return ([(r, r.prompt_token_ids) for r in self.prefills] +
                [(r, r.output_token_ids[-1:]) for r in self.decodes])

    @property
    def num_tokens(self) -> int:
        return sum(len(r.prompt_token_ids) for r in self.prefills) + len(self.decodes)


# ANCHOR: scheduler
class Scheduler:
    def __init__(self, config: EngineConfig, kv):
        self.config = config
        self.kv = kv
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.steps_since_admission = 0

    def schedule(self) -> ScheduledBatch:
        decodes = list(self.running)
        budget = self.config.max_num_batched_tokens
        if self.config.scheduling_policy == "mixed":
            prefills = self.admit(budget - len(decodes))
            return ScheduledBatch(prefills, decodes)
        prefills = self.admit(budget)              # prefill_first: new prompts get the whole step
        return ScheduledBatch(prefills, []) if prefills else ScheduledBatch([], decodes)

    def admit(self, token_budget) -> list[Request]:
        """First come, first served: admit from the head of the queue while the
        head fits; never skip it (so no request waits forever)."""
        if not self.admission_open():
            return []
        admitted = []
        while self.waiting and len(self.running) < self.config.max_num_seqs:
            request = self.waiting[0]
            if len(request.prompt_token_ids) > token_budget or not self.kv.can_allocate(request):
                break
            self.kv.allocate(request)
            self.running.append(self.waiting.popleft())
            admitted.append(request)
            token_budget -= len(request.prompt_token_ids)
        return admitted

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

    def finish(self, request: Request):
        """A request finished or was aborted: its slot/blocks are free at once."""
        if request in self.running:
            self.running.remove(request)
            self.kv.free(request)
# ANCHOR_END: scheduler
