"""What every stage shares: the request queue, the sampler and the stop rules.

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

import numpy as np
import torch

from ..attention import attention_ops
from ..config import EngineConfig
from ..executors import Executor
from ..kernels import reference
from ..layer_ops import layer_ops
from ..observer import StepLog, TimedExecutor
from ..request import Request
from ..sampling import GREEDY_BELOW, SamplingParams


class Engine:
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

    def tensor(self, values, dtype=torch.long):
        return to_device(values, dtype, self.device)


def to_device(values, dtype, device):
    """A host list as a tensor on device, staged in pinned memory and copied
    without waiting: a blocking copy would also wait for every kernel already
    queued on the GPU. numpy reads the list: about three times as fast as
    torch.tensor, and a step's inputs can hold thousands of ints."""
    host = torch.from_numpy(np.array(values, dtype=NUMPY[dtype]))
    if str(device).startswith("cuda"):
        host = host.pin_memory()
    return host.to(device, non_blocking=True)


NUMPY = {torch.long: np.int64, torch.int32: np.int32, torch.bool: np.bool_, torch.float32: np.float32}


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


# ANCHOR: sampler
class Sampler:
    """logits [B, V] (fp32) + one SamplingParams per row -> next token ids [B],
    on the logits' device. Nothing here waits for the device: the host reads the
    tokens only when it needs them (read_tokens).

    A row samples by racing exponentials: each token's probability divided by
    its own draw from Exp(1), the largest wins. That picks token i with
    probability p_i, as multinomial does, in one argmax for the whole batch. A
    request with a seed draws from a generator of its own, so its tokens do not
    depend on what else is in the batch; the others share the engine's. A row
    whose logits are not finite gets -1 (``finite_argmax``: the plain PyTorch
    ops or one fused kernel, minicb/layer_ops.py): that request fails alone.
    """

    def __init__(self, device, seed: int, finite_argmax=reference.finite_argmax):
        self.generator = torch.Generator(device).manual_seed(seed)
        self.finite_argmax = finite_argmax

    def __call__(self, logits, params: list[SamplingParams], generators: list):
        tokens = self.finite_argmax(logits)           # greedy, or -1: not finite
        if not all(greedy(p) for p in params):
            probs = filtered_probabilities(logits, params)
            noise = torch.empty_like(probs).exponential_(generator=self.generator)
            for row, generator in enumerate(generators):
                if generator is not None:        # the request's own seed
                    noise[row].exponential_(generator=generator)
            is_greedy = to_device([greedy(p) for p in params], torch.bool,
                                  logits.device)
            sampled = (probs / noise).argmax(dim=-1)
            tokens = torch.where(is_greedy | (tokens < 0), tokens, sampled)
        return tokens


def filtered_probabilities(logits, params: list[SamplingParams]):
    """Each row's softmax at its temperature, then its top_k and top_p."""
    device = logits.device
    temperature = to_device([max(p.temperature, GREEDY_BELOW) for p in params],
                            torch.float32, device)
    # Shift the best logit to 0 first: divided by a tiny temperature, the rest go to
    # -inf (never selected) instead of the best going to +inf (and softmax to nan).
    scaled = (logits - logits.max(dim=-1, keepdim=True).values) / temperature[:, None]
    if any(p.top_k for p in params):
        scaled = keep_top_k(scaled, [p.top_k for p in params])
    probs = torch.softmax(scaled, dim=-1)
    if any(p.top_p < 1 for p in params):
        top_p = to_device([p.top_p for p in params], torch.float32, device)
        probs = keep_top_p(probs, top_p)
    return probs
# ANCHOR_END: sampler


def greedy(p: SamplingParams) -> bool:
    return p.temperature < GREEDY_BELOW


def keep_top_k(scaled, top_k: list[int]):
    """-inf outside each row's top_k best logits (a row's 0: all of them)."""
    width = min(max(top_k), scaled.shape[-1])
    best = torch.topk(scaled, width, dim=-1).values                # [B, width], best first
    kth = to_device([min(k, width) - 1 if k else 0 for k in top_k], torch.long, scaled.device)
    off = to_device([k == 0 for k in top_k], torch.bool, scaled.device)
    threshold = best.gather(-1, kth[:, None]).masked_fill(off[:, None], float("-inf"))
    return scaled.masked_fill(scaled < threshold, float("-inf"))


# ANCHOR: keep_top_p
def keep_top_p(probs, top_p):
    """probs [B, V], top_p [B]: zero every token outside each row's smallest set
    whose probability reaches top_p."""
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    # the mass of strictly better tokens
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    dropped = mass_before >= top_p[:, None]
    dropped[:, 0] = False          # the best token stays: top_p may round to 0
    kept = torch.zeros_like(probs).scatter_(-1, order,
                                            sorted_probs.masked_fill(dropped, 0.0))
    return kept / kept.sum(dim=-1, keepdim=True)
# ANCHOR_END: keep_top_p


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
