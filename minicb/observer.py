"""The step log: what every forward pass ran, and how long it took, kept from outside the stages.

A stage says what a forward pass ran in a ``StepOutcome``: its kind, the
request each batch row advanced, the tokens fed through the model, and the
KV memory held as it ran. It hands the outcome to the step log when the
pass's tokens are out. Everything about time is the log's own: every
``step()`` runs inside ``StepLog.stepping`` (when the step began), and a
stage's executor is wrapped in a ``TimedExecutor`` (when each forward pass
was launched, and how long the device took). The log keeps a ``StepRecord``
per forward pass, which ``RunMetrics`` reads.
"""
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from .executor_contract import ExecutorWrapper
from .metrics import StepRecord

# Outside a measured run an engine keeps only its most recent step records, so
# one that serves for days holds a bounded log (a record lists every batch row).
RECENT_STEPS = 1000


# ANCHOR: step_outcome
@dataclass
class StepOutcome:
    """What one forward pass ran, as the stage that ran it reports it."""
    kind: str           # "prefill", "decode" or "mixed"
    rows: list          # per batch row: the id of the request it advanced, or None
    num_tokens: int     # tokens fed through the model, padding included
    kv_held: list       # (request id, tokens cached, token slots held) per KV holder
    # Token slots allocated, where that is not kv_held's sum (shared blocks count once).
    kv_reserved: int | None = None
# ANCHOR_END: step_outcome


# ANCHOR: device_timer
class DeviceTimer:
    """How long the work launched inside ``with`` takes on the device: CUDA
    events on a GPU (read ``seconds`` once the step has synced, e.g. after
    sampling), the engine's clock on a CPU, where the work runs as it is
    launched (or, simulated, where the clock moves by what it would take)."""

    def __init__(self, device, clock=time.perf_counter):
        self.cuda, self.clock = str(device).startswith("cuda"), clock

    def __enter__(self):
        if self.cuda:
            self.begin, self.end = (torch.cuda.Event(enable_timing=True),
                                    torch.cuda.Event(enable_timing=True))
            self.begin.record()
        self.started = self.clock()
        return self

    def __exit__(self, *exc):
        if self.cuda:
            self.end.record()
        self.elapsed = self.clock() - self.started

    @property
    def seconds(self) -> float:
        return self.begin.elapsed_time(self.end) / 1e3 if self.cuda else self.elapsed
# ANCHOR_END: device_timer


@dataclass
class Launch:
    """A forward pass launched and not yet reported."""
    step_started: float        # when the step that launched it began
    forward: DeviceTimer       # its forward pass: launched at forward.started


# ANCHOR: step_log
class StepLog:
    """The engine's step log: a StepRecord per forward pass, from the stage's
    StepOutcome and the log's own times."""

    def __init__(self, device, clock=time.perf_counter):
        self.device, self.clock = device, clock
        self.records = deque(maxlen=RECENT_STEPS)
        # Launched, not yet reported, oldest first. A stage reports its forward
        # passes in the order it launched them: at once, or (async scheduling)
        # in the next step.
        self.launches: deque[Launch] = deque()
        self.step_started = None    # when the step running now began

    @contextmanager
    def stepping(self):
        """Around each step(). A step that raises undid the forward pass it
        launched: that one is never reported."""
        self.step_started, pending = self.clock(), len(self.launches)
        try:
            yield
        except BaseException:
            while len(self.launches) > pending:
                self.launches.pop()
            raise
        finally:
            self.step_started = None

    def launched(self, forward: DeviceTimer):
        # A pass outside any step (profiling the KV budget) is no step's.
        if self.step_started is not None:
            self.launches.append(Launch(self.step_started, forward))

    def report(self, outcome: StepOutcome):
        """The stage's oldest launched forward pass ran this, and its tokens are out."""
        launch = self.launches.popleft()
        held = outcome.kv_held
        reserved = outcome.kv_reserved
        if reserved is None:
            reserved = sum(slots for _, _, slots in held)
        started = launch.step_started
        self.records.append(StepRecord(
            outcome.kind, outcome.rows, outcome.num_tokens, reserved,
            sum(cached for _, cached, _ in held), kv_held=held, started=started,
            duration=self.clock() - started,
            host_time=launch.forward.started - started,
            forward_time=launch.forward.seconds))
# ANCHOR_END: step_log

    @contextmanager
    def keeping_all(self):
        """Inside, every record is kept, in the list this yields (for RunMetrics)."""
        self.records = []
        try:
            yield self.records
        finally:
            self.records = deque(self.records, maxlen=RECENT_STEPS)


# ANCHOR: timed_executor
class TimedExecutor(ExecutorWrapper):
    """A stage's executor, with each forward pass timed for the step log:
    when it was launched, and how long the device took. The rest of the
    executor's contract (``config``, ``new_kv_cache``, ...) it forwards, and
    nothing else (minicb.executor_contract)."""

    def __init__(self, executor, log: StepLog):
        super().__init__(executor)
        self.log = log

    def execute(self, *inputs):
        with DeviceTimer(self.log.device, self.log.clock) as forward:
            logits = self.executor.execute(*inputs)
        self.log.launched(forward)
        return logits
# ANCHOR_END: timed_executor
