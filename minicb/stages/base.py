"""What every stage shares: the request queue, sampling and the stop rules.

Every engine is driven the same way, online or offline: ``add_request``
queues a request, ``step`` runs at most one forward pass and returns the
requests that received a token, ``abort`` drops a request. A stage decides
*which* tokens go through the model together and where their K/V live;
turning hidden states into tokens happens here, once. Each forward pass
reports what it ran to the step log (``minicb/observer.py``), which times it
from outside.

Stages 1-3 also share how they run: ``RunToCompletionEngine`` runs a batch
to its end. Stages 4-5 share theirs, scheduling before every step, in
``iteration.py``.
"""
from collections import deque
from contextlib import contextmanager

import torch

from ..attention import attention_ops
from ..config import EngineConfig
from ..executors import Executor
from ..layer_ops import layer_ops
from ..observer import StepLog, TimedExecutor
from ..request import Request
from ..sampling import Sampler, to_device


class Engine:
    @staticmethod
    def sequences_per_step(config: EngineConfig) -> int:
        """The most sequences one forward pass holds: an executor that pads steps
        to fixed sizes sizes them from it."""
        return config.max_num_seqs

    def __init__(self, executor: Executor, config: EngineConfig):
        # Every timestamp: the wall clock, or a simulated GPU's virtual one.
        self.clock = executor.clock
        self.log = StepLog(config.device, self.clock)
        # Runs the model (minicb.executors), each forward pass timed for the log.
        self.executor = TimedExecutor(executor, self.log)
        self.config = config
        self.device = config.device
        self.ops = attention_ops(config.attention_backend)
        self.sampler = Sampler(config.device, config.seed, layer_ops(config.fused_ops).finite_argmax)
        self.waiting: deque[Request] = deque()     # arrived, not yet scheduled
        self.unfinished: dict[str, Request] = {}   # every request not yet finished, by id
        self.progress = None                       # a tqdm bar to tick as requests finish, if any

    # ANCHOR: online_api
    def add_request(self, request: Request):
        self.waiting.append(request)
        self.unfinished[request.request_id] = request

    def has_unfinished_requests(self) -> bool:
        return bool(self.unfinished)

    def step(self) -> list[Request]:
        """Run at most one forward pass; return the requests that got a token."""
        with self.log.stepping():          # the step log's clock starts
            return self.run_step()

    def close(self):
        """Let go of what the stage keeps between steps (the front door aborts the
        requests first)."""

    def abort(self, request_id: str):
        """Finish a request now, wherever it is. Unknown or finished ids are a no-op."""
        request = self.unfinished.pop(request_id, None)
        if request is None:
            return
        if request in self.waiting:
            self.waiting.remove(request)
        request.abort(self.clock())
        self.release(request)
    # ANCHOR_END: online_api

    def release(self, request: Request):
        """Give back what an aborted request holds (stages with per-request KV override)."""

    def check_request(self, request: Request, label: str):
        """Raise ValueError if this engine could never serve the request."""

    # ANCHOR: sample
    def sample(self, requests: list[Request], logits) -> None:
        """logits [len(requests), vocab]: each request's last position's. Sample
        one token for each and append it; finished requests leave
        ``unfinished`` and tick the progress bar."""
        tokens = self.sampler(logits, [r.params for r in requests],
                              [r.generator for r in requests])
        self.deliver(requests, read_tokens(tokens))
    # ANCHOR_END: sample

    # ANCHOR: deliver
    def deliver(self, requests: list[Request], tokens: list) -> list[Request]:
        """Append each request's new token and return the requests; a request
        the token ends leaves ``unfinished``. A request whose sampling raised
        gets the exception instead, and fails alone."""
        now = self.clock()
        for request, token in zip(requests, tokens):
            if isinstance(token, Exception):
                request.fail(token, now)
            # An aborted request may still get its last token.
            elif not request.finished:
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

    def run_step(self) -> list[Request]:
        """What step() runs: the stage's own step."""
        raise NotImplementedError

    @property
    def steps(self):
        """The step log's records: the most recent, or a measured run's all."""
        return self.log.records

    @contextmanager
    def measuring(self, progress=None):
        """Inside: every step is recorded, into the list this yields (for
        RunMetrics), and ``progress`` ticks as requests finish."""
        self.progress = progress
        try:
            with self.log.keeping_all() as records:
                yield records
        finally:
            self.progress = None

    def new_kv_cache(self, *leading):
        """K and V caches [layers, *leading, kv_heads, head_dim]: the stage picks the
        middle axes, the executor where they live (with tensor parallelism, a share
        of the KV heads in each worker)."""
        return self.executor.new_kv_cache(*leading)

    def kv_budget_bytes(self) -> int | None:
        """The bytes the KV cache may take: kv_cache_memory_bytes as given, else what
        the executor knows (a simulated GPU's memory less its weights); None where
        the stage must size it itself."""
        if self.config.kv_cache_memory_bytes is not None:
            return self.config.kv_cache_memory_bytes
        return self.executor.kv_memory(self.config.gpu_memory_utilization)

    def new_batch_kv_cache(self, batch: int, capacity: int):
        """Stages 1-3: the K and V of one batch, [layers, batch, capacity, ...]."""
        return self.executor.new_batch_kv_cache(batch, capacity)

    def tensor(self, values, dtype=torch.long):
        return to_device(values, dtype, self.device)


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


def read_tokens(tokens) -> list:
    """The sampled tokens on the host (this waits for the device); a row that
    could not be sampled (-1) gets an error instead, and its request fails alone."""
    return [token if token >= 0 else RuntimeError(
                "its logits are not finite (nan or inf): there is nothing to sample")
            for token in tokens.tolist()]


# ANCHOR: run_to_completion
class RunToCompletionEngine(Engine):
    """Stages 1-3: take a batch from the queue, run it to completion (one
    forward pass per step()), then take the next. A stage says which requests
    form the next batch (``next_batch``) and how a batch runs (``run_batch``,
    a generator that yields the requests advanced by each forward pass)."""

    def __init__(self, executor, config):
        super().__init__(executor, config)
        # The current batch and its run_batch generator.
        self.batch, self.running = [], None

    def run_step(self) -> list[Request]:
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

    def close(self):
        """A batch's KV cache lives as long as its run_batch generator: closed in
        the middle of a batch, drop it, and the cache with it."""
        self.batch, self.running = [], None

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
