"""What every stage shares: the request queue, the sampler, and the step log.

Every engine is driven the same way, online or offline: ``add_request``
queues a request, ``step`` runs at most one forward pass and returns the
requests that received a token, ``abort`` drops a request. A stage decides
*which* tokens go through the model together and where their K/V live;
turning hidden states into tokens and recording what each step did happen
here, once.

Two ways to run steps are shared too: ``RunToCompletionEngine`` (stages 1-3
run a batch to its end) and ``IterationEngine`` (stages 4-5 schedule before
every step).
"""
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from ..attention import attention_ops
from ..config import EngineConfig
from ..metrics import StepRecord
from ..model import Decoder
from ..request import Request
from ..sampling import Sampler
from ..scheduler import ScheduledBatch, Scheduler

# Outside a measured run an engine keeps only its most recent step records, so
# one that serves for days holds a bounded log (a record lists every batch row).
RECENT_STEPS = 1000


class Engine:
    def __init__(self, model: Decoder, config: EngineConfig):
        self.model = model
        self.config = config
        self.device = config.device
        self.ops = attention_ops(config.attention_backend)
        self.sampler = Sampler()
        self.waiting: deque[Request] = deque()     # arrived, not yet scheduled
        self.unfinished: dict[str, Request] = {}   # every request not yet finished, by id
        self.steps: deque[StepRecord] = deque(maxlen=RECENT_STEPS)
        self.progress = None                       # a tqdm bar to tick as requests finish, if any

    # ANCHOR: online_api
    def add_request(self, request: Request):
        self.waiting.append(request)
        self.unfinished[request.request_id] = request

    def has_unfinished_requests(self) -> bool:
        return bool(self.unfinished)

    def step(self) -> list[Request]:
        """Run at most one forward pass; return the requests that got a token."""
        raise NotImplementedError

    def abort(self, request_id: str):
        """Finish a request now, wherever it is. Unknown or finished ids are a no-op."""
        request = self.unfinished.pop(request_id, None)
        if request is None:
            return
        if request in self.waiting:
            self.waiting.remove(request)
        request.abort(time.perf_counter())
        self.release(request)
    # ANCHOR_END: online_api

    def release(self, request: Request):
        """Give back what an aborted request holds (stages with per-request KV override)."""

    def check_request(self, request: Request, label: str):
        """Raise ValueError if this engine could never serve the request."""

    # ANCHOR: sample
    def sample(self, requests: list[Request], hidden) -> None:
        """hidden [len(requests), hidden_size]: each request's last position.
        Sample one token for each and append it; finished requests leave
        ``unfinished`` and tick the progress bar."""
        logits = self.model.compute_logits(hidden)
        self.deliver(requests, self.sampler(logits, [r.params for r in requests], [r.generator for r in requests]))
    # ANCHOR_END: sample

    # ANCHOR: deliver
    def deliver(self, requests: list[Request], tokens: list) -> list[Request]:
        """Append each request's new token and return the requests; a request
        the token ends leaves ``unfinished``. A request whose sampling raised
        gets the exception instead, and fails alone."""
        now = time.perf_counter()
        for request, token in zip(requests, tokens):
            if isinstance(token, Exception):
                request.fail(token, now)
            elif not request.finished:         # (an aborted request may still get its last token)
                request.output_token_ids.append(token)
                request.all_token_ids.append(token)
                if request.metrics.first_token_time is None:
                    request.metrics.first_token_time = now
                request.metrics.num_output_tokens = len(request.output_token_ids)
                reason = stop_reason(request, token)
                if reason is not None:
                    request.finish(reason, now)
            if request.finished:
                self.unfinished.pop(request.request_id, None)
                if self.progress is not None:
                    self.progress.update(1)
        return requests
    # ANCHOR_END: deliver

    @contextmanager
    def measuring(self, progress=None):
        """Inside: every step is recorded, into the list this yields (for
        RunMetrics), and ``progress`` ticks as requests finish."""
        self.steps, self.progress = [], progress
        try:
            yield self.steps
        finally:
            self.steps, self.progress = deque(self.steps, maxlen=RECENT_STEPS), None

    def record(self, kind, rows, num_tokens, kv_held, started, kv_reserved=None, host_time=0.0, forward_time=0.0):
        """kv_held: (request id, tokens cached, token slots held) per request
        holding KV memory. kv_reserved defaults to the slots they hold."""
        reserved = sum(h for _, _, h in kv_held) if kv_reserved is None else kv_reserved
        self.steps.append(StepRecord(kind, rows, num_tokens, reserved, sum(u for _, u, _ in kv_held),
                                     duration=time.perf_counter() - started, kv_held=kv_held,
                                     host_time=host_time, forward_time=forward_time, started=started))

    def new_kv_cache(self, *leading):
        """Zeroed K and V tensors [layers, *leading, kv_heads, head_dim]: the stage picks the middle axes."""
        cfg = self.model.config
        shape = (cfg.num_hidden_layers, *leading, cfg.num_key_value_heads, cfg.head_dim)
        weight = self.model.embed_tokens.weight
        return weight.new_zeros(shape), weight.new_zeros(shape)

    def tensor(self, values, dtype=torch.long):
        # Staged in pinned host memory and copied without waiting: a blocking copy
        # would also wait for every kernel already queued on the GPU.
        on_cuda = str(self.device).startswith("cuda")
        return torch.tensor(values, dtype=dtype, pin_memory=on_cuda).to(self.device, non_blocking=True)


# ANCHOR: stop_reason
def stop_reason(request: Request, token: int) -> str | None:
    """Why the token just appended ends the request, or None if it does not."""
    if token in request.params.stop_token_ids:
        return "stop"
    if token in request.eos_token_ids and not request.params.ignore_eos:
        return "eos"
    if len(request.output_token_ids) >= request.params.max_tokens:
        return "length"
    return None
# ANCHOR_END: stop_reason


# ANCHOR: device_timer
class DeviceTimer:
    """How long the work launched inside ``with`` takes on the device: CUDA
    events on a GPU (read ``seconds`` once the step has synced, e.g. after
    sampling), wall time on a CPU, where the work runs as it is launched."""

    def __init__(self, device):
        self.cuda = str(device).startswith("cuda")

    def __enter__(self):
        if self.cuda:
            self.begin, self.end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            self.begin.record()
        self.started = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.cuda:
            self.end.record()
        self.elapsed = time.perf_counter() - self.started

    @property
    def seconds(self) -> float:
        return self.begin.elapsed_time(self.end) / 1e3 if self.cuda else self.elapsed
# ANCHOR_END: device_timer


# ANCHOR: run_to_completion
class RunToCompletionEngine(Engine):
    """Stages 1-3: take a batch from the queue, run it to completion (one
    forward pass per step()), then take the next. A stage says which requests
    form the next batch (``next_batch``) and how a batch runs (``run_batch``,
    a generator that yields the requests advanced by each forward pass)."""

    def __init__(self, model, config):
        super().__init__(model, config)
        self.batch, self.running = [], None    # the current batch and its run_batch generator

    def step(self) -> list[Request]:
        while True:
            if self.running is None:
                self.batch = self.next_batch()
                if not self.batch:
                    return []          # nothing ready to run yet
                self.running = self.run_batch(self.batch)
            try:
                advanced = next(self.running, None)
            except BaseException:
                self.requeue()
                raise
            if advanced is None:
                self.running = None    # that batch is done: start the next one
                continue
            if all(r.finished for r in advanced):
                # Its last step: drop the generator now, and the KV cache its frame
                # holds, rather than at the next step(), which may be long in coming.
                self.running = None
            return advanced

    def requeue(self):
        """A step raised: its batch's unfinished requests go back to the head of
        the queue. They run again from their tokens so far, output included."""
        self.running = None
        for request in reversed(self.batch):
            if not request.finished:
                self.waiting.appendleft(request)

    def next_batch(self) -> list[Request]:
        raise NotImplementedError

    def run_batch(self, batch):
        raise NotImplementedError
# ANCHOR_END: run_to_completion


@dataclass
class LaunchedStep:
    """A forward pass on its way: what ran, and what to log once its tokens are read."""
    batch: ScheduledBatch
    sampled: list                   # the requests that get a token from it
    started: float
    host_time: float
    forward_timer: DeviceTimer
    kv_usage: tuple                 # for the step log: (rows, held, reserved), as the step ran


# ANCHOR: iteration_engine
class IterationEngine(Engine):
    """Stages 4-5: the scheduler runs before every forward pass (Orca's
    iteration-level scheduling), and the step packs whatever it chose into one
    ragged batch. A stage says where K/V live: its KV manager
    (``make_kv_manager``) and the attention metadata that layout implies
    (``attention_metadata``)."""

    def __init__(self, model, config):
        super().__init__(model, config)
        self.kv = self.make_kv_manager()
        self.scheduler = self.make_scheduler()
        self.waiting = self.scheduler.waiting          # add_request/abort use the scheduler's queue

    def make_scheduler(self) -> Scheduler:
        return Scheduler(self.config, self.kv)

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
        ids, positions, attn, last_rows = self.prepare(batch)
        host_time = time.perf_counter() - started             # scheduling + building inputs
        with DeviceTimer(self.device) as forward_timer:
            hidden = self.forward(batch.kind, ids, positions, attn)
        self.scheduler.advance(batch)
        # A request samples once all its tokens are computed (not after a partial prefill chunk).
        ready = [i for i, r in enumerate(batch.requests) if r.num_computed_tokens == self.scheduler.num_tokens(r)]
        logits = self.model.compute_logits(hidden[self.tensor([last_rows[i] for i in ready])])
        step = LaunchedStep(batch, [batch.requests[i] for i in ready], started, host_time, forward_timer,
                            self.kv_usage(batch))
        return step, logits

    def finish_step(self, step, tokens) -> list:
        """The step's tokens are on the host: hand them out, log the step, and
        free the memory of the requests that finished."""
        delivered = self.deliver(step.sampled, tokens)
        rows, held, reserved = step.kv_usage
        self.record(step.batch.kind, rows, step.batch.num_tokens, held, step.started, kv_reserved=reserved,
                    host_time=step.host_time, forward_time=step.forward_timer.seconds)
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
        for request, n in batch.entries:
            start = request.num_computed_tokens               # position of the first new token
            ids += self.input_ids(request, n)
            positions += range(start, start + n)
            slot_mapping += self.kv.cache_rows(request, start, n)
            cu_seqlens.append(cu_seqlens[-1] + n)
            seq_lens.append(start + n)
        t = self.tensor
        attn = self.attention_metadata(batch, t(slot_mapping), t(cu_seqlens, torch.int32),
                                       t(seq_lens, torch.int32), max(n for _, n in batch.entries))
        last_rows = [end - 1 for end in cu_seqlens[1:]]      # each request's last token
        return t(ids), t(positions), attn, last_rows

    def input_ids(self, request, n) -> list[int]:
        """The n tokens the request feeds this step, from its first uncomputed one."""
        start = request.num_computed_tokens
        return request.all_token_ids[start:start + n]
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

    def kv_usage(self, batch) -> tuple[list, list, int]:
        """For the step log, once the step is launched: the request id each batch
        row ran (or None), (request id, tokens cached, token slots held) for each
        running request, and the token slots they hold together."""
        raise NotImplementedError
