"""The engine loop: one thread owns the engine. HTTP handlers put a new request
(or an abort) on a thread-safe queue (``Submission``), and each request gets its
outputs on a queue of its own, detokenized a token at a time on this thread; the
metrics ``/metrics`` serves are counted here (``ServerMetrics``).
"""
import asyncio
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from tokenizers.decoders import DecodeStream

from ...request import StepOutput
from ...sampling_params import SamplingParams


@dataclass
class Submission:
    """What the engine loop needs to start a request, and where its outputs go."""
    prompt_token_ids: list[int]
    params: SamplingParams
    outbox: asyncio.Queue                # (StepOutput, new text), or a ValueError if refused
    loop: asyncio.AbstractEventLoop      # the event loop that reads the outbox
    request_id: str = ""
    detokenizer: "Detokenizer" = None    # made by the engine loop, which alone uses it

    def __post_init__(self):
        # Chosen here, not by the engine, so that an abort can name it at any time.
        self.request_id = self.request_id or f"req-{uuid.uuid4().hex}"


class EngineLoop:
    """The one thread that calls the engine. New requests and aborts arrive on
    ``inbox``; each step's outputs go to their requests' outboxes."""

    def __init__(self, engine, max_queued: int = 256):
        self.engine, self.max_queued = engine, max_queued
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.submissions: dict[str, Submission] = {}     # only this thread touches it
        self.in_flight = 0                               # submitted, not yet finished
        self.aborted = 0                                 # stopped before they finished
        self.metrics = None                              # a ServerMetrics, if serving
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.run, name="minicb-engine", daemon=True)

    # ANCHOR: submit
    def try_submit(self, submission: Submission) -> bool:
        """Queue a request unless the server already holds ``max_queued``
        (running and waiting): then the caller answers 429, not the memory."""
        with self.lock:
            if self.in_flight >= self.max_queued:
                return False
            self.in_flight += 1
        self.inbox.put(("add", submission))
        return True

    def abort(self, request_id: str, then: Callable[[], None] | None = None):
        """Stop a request; ``then``, if given, is called on the engine loop's
        thread once the engine has let go of it."""
        self.inbox.put(("abort", (request_id, then)))

    async def abort_and_wait(self, request_id: str):
        """Stop a request, and return once what it held is free: a response sent
        after this is seen after it by /metrics too."""
        loop, settled = asyncio.get_running_loop(), asyncio.Event()
        self.abort(request_id, lambda: loop.call_soon_threadsafe(settled.set))
        await settled.wait()
    # ANCHOR_END: submit

    # ANCHOR: loop
    def run(self):
        while True:
            busy = self.engine.has_unfinished_requests()
            try:      # take every new request and abort; wait for one only when idle
                while True:
                    command, item = self.inbox.get(block=not busy)
                    if command == "stop":
                        return
                    self.handle(command, item)
                    busy = True
            except queue.Empty:
                pass
            try:
                outputs = self.engine.step()
            except Exception as error:     # a bug: fail what is live, keep serving
                outputs = self.fail_all(error)
            for out in outputs:
                self.deliver(out)
            if not outputs:
                time.sleep(1e-3)       # nothing ready (e.g. a batch window still open)

    def handle(self, command, item):
        if command == "add":
            try:
                self.engine.add_request(item.prompt_token_ids, item.params,
                                        request_id=item.request_id)
                item.detokenizer = Detokenizer(self.engine.tokenizer)
            except Exception as error:    # a ValueError is a refusal (400), else a bug
                self.engine.abort(item.request_id)       # nothing stays queued
                self.finished(item, error)
                return
            self.submissions[item.request_id] = item
        elif command == "abort":
            request_id, then = item
            try:
                if request_id in self.submissions:
                    self.engine.abort(request_id)
                    self.aborted += 1
                    if self.metrics:
                        self.metrics.aborted.inc()
                    self.finished(self.submissions.pop(request_id), None)
            finally:              # whoever waits for it must not wait forever
                if then is not None:
                    then()
    # ANCHOR_END: loop

    def fail_all(self, error) -> list:
        """Every live request ends with the error as its message."""
        for request_id in self.submissions:
            self.engine.abort(request_id)
        return [failed(request_id, error) for request_id in self.submissions]

    # ANCHOR: deliver
    def deliver(self, out):
        submission = self.submissions.get(out.request_id)
        if submission is None:
            return
        try:
            text = "" if out.error else submission.detokenizer.text(out)
        except Exception as error:        # a bug in decoding: this request fails alone
            self.engine.abort(out.request_id)
            out, text = failed(out.request_id, error), ""
        # Counted before the client hears of it: a scrape of /metrics right after a
        # response includes that request.
        if out.finished and self.metrics:
            self.metrics.request_finished(out)
        submission.loop.call_soon_threadsafe(submission.outbox.put_nowait, (out, text))
        if out.finished:
            del self.submissions[out.request_id]
            self.finished(submission, None)

    def finished(self, submission, error):
        with self.lock:
            self.in_flight -= 1
        if error is not None:
            submission.loop.call_soon_threadsafe(submission.outbox.put_nowait, error)
    # ANCHOR_END: deliver

    def start(self):
        self.thread.start()

    def stop(self):
        self.inbox.put(("stop", None))
        self.thread.join()


def failed(request_id, error) -> StepOutput:
    """A request's last output when something went wrong on the server's side."""
    return StepOutput(request_id, [], [], True, "error", error=f"{type(error).__name__}: {error}")


# ANCHOR: detokenizer
class Detokenizer:
    """A request's text, a token at a time, on the engine loop's thread. The
    tokenizers library's DecodeStream keeps the few tokens whose character is
    not yet whole (a multi-byte character split across tokens) and returns the
    text that is. The last output's text comes from decoding the whole answer
    once, so the text sent is exactly what decoding it at once gives."""

    def __init__(self, tokenizer):
        self.tokenizer, self.stream = tokenizer, DecodeStream(skip_special_tokens=True)
        self.sent = 0                     # characters returned so far

    def text(self, out) -> str:
        """The new text that this StepOutput's tokens complete."""
        if out.finished:
            whole = self.tokenizer.decode(out.output_token_ids,
                                          skip_special_tokens=True)
            piece = whole[self.sent:]
        else:
            backend = self.tokenizer.backend_tokenizer
            piece = "".join(self.stream.step(backend, token) or ""
                            for token in out.new_token_ids)
        self.sent += len(piece)
        return piece
# ANCHOR_END: detokenizer


class ServerMetrics:
    """What GET /metrics reports, in Prometheus' text format: gauges read from
    the engine when scraped, counters and histograms fed as requests finish."""

    def __init__(self, engine_loop: EngineLoop):
        self.registry = registry = CollectorRegistry()      # one per server, not global
        stage = engine_loop.engine.stage
        Gauge("minicb_requests_waiting", "Requests queued, not yet scheduled",
              registry=registry).set_function(lambda: len(stage.waiting))
        Gauge("minicb_requests_running", "Requests scheduled and not finished",
              registry=registry).set_function(lambda: len(stage.unfinished) - len(stage.waiting))
        kv = getattr(stage, "kv", None)
        if hasattr(kv, "free_blocks"):                      # stage 5
            Gauge("minicb_kv_blocks_free", "KV blocks on the free list",
                  registry=registry).set_function(lambda: len(kv.free_blocks))
            Gauge("minicb_kv_blocks_used", "KV blocks held by requests",
                  registry=registry).set_function(lambda: kv.num_blocks - len(kv.free_blocks))
        scheduler = getattr(stage, "scheduler", None)
        if hasattr(scheduler, "num_preemptions"):           # stage 5
            Gauge("minicb_preemptions", "Requests preempted so far (their KV dropped)",
                  registry=registry).set_function(lambda: scheduler.num_preemptions)
        self.finished = Counter("minicb_requests_finished", "Requests that ran to the end, "
                                "by reason", ["reason"], registry=registry)
        self.aborted = Counter("minicb_requests_aborted", "Requests stopped early: the "
                               "client went away, or a stop string", registry=registry)
        self.rejected = Counter("minicb_requests_rejected", "Requests refused: bad input "
                                "(4xx) or too many held (429)", ["status"], registry=registry)
        self.prompt_tokens = Counter("minicb_prompt_tokens", "Prompt tokens of finished "
                                     "requests", registry=registry)
        self.output_tokens = Counter("minicb_generation_tokens", "Tokens generated by "
                                     "finished requests", registry=registry)
        self.draft_tokens = Counter("minicb_spec_decode_num_draft_tokens", "Tokens drafted for "
                                    "finished requests (speculative decoding)", registry=registry)
        self.accepted_tokens = Counter("minicb_spec_decode_num_accepted_tokens", "... of which "
                                       "verified and kept", registry=registry)
        buckets = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60)
        self.ttft = Histogram("minicb_time_to_first_token_seconds", "Arrival to first token",
                              buckets=buckets, registry=registry)
        self.tpot = Histogram("minicb_time_per_output_token_seconds", "After the first token",
                              buckets=buckets, registry=registry)
        self.latency = Histogram("minicb_e2e_request_latency_seconds", "Arrival to last token",
                                 buckets=buckets, registry=registry)

    # ANCHOR: metrics
    def request_finished(self, out):
        """Called by the engine loop with a request's last StepOutput."""
        self.finished.labels(out.finish_reason).inc()
        m = out.metrics
        if m is None or m.first_token_time is None:
            return
        self.prompt_tokens.inc(m.num_prompt_tokens)
        self.output_tokens.inc(m.num_output_tokens)
        self.draft_tokens.inc(m.num_draft_tokens)
        self.accepted_tokens.inc(m.num_accepted_tokens)
        self.ttft.observe(m.ttft)
        self.latency.observe(m.latency)
        if m.num_output_tokens > 1:
            self.tpot.observe(m.tpot)
    # ANCHOR_END: metrics

    def text(self) -> bytes:
        return generate_latest(self.registry)
