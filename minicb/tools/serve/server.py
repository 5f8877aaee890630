"""An OpenAI-compatible HTTP server over any stage: ``python -m minicb serve``.

One thread owns the engine, the *engine loop*. The HTTP handlers never touch the
engine: they put a new request (or an abort) on a thread-safe queue, and each
request gets its outputs on a queue of its own. This is the shape of vLLM's and
SGLang's servers, without their separate processes.

FastAPI (on Starlette, served by uvicorn) handles the HTTP: request bodies are
pydantic models, so a malformed field is refused before it reaches the engine,
and a streamed answer is a generator of server-sent events whose cancellation
(the client went away) aborts the request. Prompts are tokenized once, on a
worker thread; answers are detokenized a token at a time on the engine loop's:
the event loop that every client shares does no work that grows with a
prompt's or an answer's length beyond parsing the body.
"""
import asyncio
import contextlib
import copy
import hmac
import ipaddress
import json
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from jinja2 import TemplateError
from prometheus_client import (CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram,
                               generate_latest)
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException
from tokenizers.decoders import DecodeStream

from ...config import EngineConfig
from ...executors.parallel import free_port
from ...llm import check_text
from ...request import StepOutput
from ...sampling import SamplingParams

MAX_REQUEST_BYTES = 2**21      # 2 MiB: far more than any prompt max_model_len holds
DRAIN_BYTES = 2**26            # a refused body is read and dropped up to 64 MiB (BodyLimit)


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
        self.ttft.observe(m.ttft)
        self.latency.observe(m.latency)
        if m.num_output_tokens > 1:
            self.tpot.observe(m.tpot)
    # ANCHOR_END: metrics

    def text(self) -> bytes:
        return generate_latest(self.registry)


# ---------------------------------------------------------------- the HTTP side
def make_app(engine, model_name: str, max_queued: int = 256,
             max_request_bytes: int = MAX_REQUEST_BYTES, api_key: str | None = None):
    """The FastAPI app: OpenAI's completions, chat completions and models
    endpoints, and a health check, over one EngineLoop. A body over
    max_request_bytes is refused (413) before it is parsed; with an api_key,
    every /v1 request must bring it (401 otherwise)."""
    longest = longest_request(engine)         # before the engine loop owns the engine
    loop_thread = EngineLoop(engine, max_queued)
    metrics = loop_thread.metrics = ServerMetrics(loop_thread)
    encoder = PromptEncoder(engine.tokenizer, engine.config.max_model_len)
    app = FastAPI(title="minicb", lifespan=lifespan(loop_thread))
    app.state.engine_loop, app.state.prompt_encoder = loop_thread, encoder
    app.state.longest_request = longest

    def refuse(message, param, status=400, kind="invalid_request_error", code=None):
        metrics.rejected.labels(str(status)).inc()
        return openai_error(message, param, status, kind, code)

    if api_key is not None:
        if not api_key:
            raise ValueError("api_key is empty: give a key, or None to let anyone ask")
        app.add_middleware(ApiKey, key=api_key, refused=lambda: refuse(
            "Incorrect API key provided: send 'Authorization: Bearer <key>' with the "
            "server's key", None, 401, code="invalid_api_key"))

    app.add_middleware(BodyLimit, max_bytes=max_request_bytes)     # outermost: first to run

    # ANCHOR: errors
    @app.exception_handler(RequestValidationError)
    async def bad_request(_, error: RequestValidationError):
        first = error.errors()[0]
        if first["type"] == "json_invalid":             # its loc is a character offset
            return refuse(f"the body is not valid JSON: {first['ctx']['error']}", None)
        param = ".".join(str(p) for p in first["loc"] if p != "body") or None
        message = ("unrecognized request argument" if first["type"] == "extra_forbidden"
                   else first["msg"].removeprefix("Value error, "))
        return refuse(f"{param or 'body'}: {message}", param)

    @app.exception_handler(HTTPException)
    async def http_error(_, error: HTTPException):
        """Starlette's own refusals in OpenAI's shape: a body too large, one that
        is not JSON at all (invalid UTF-8, nested too deep), an unknown path."""
        message = error.detail
        if error.status_code == 413:
            message = f"the request body is larger than {max_request_bytes} bytes"
        response = refuse(message, None, error.status_code)
        response.headers.update(error.headers or {})      # a 405's Allow
        return response
    # ANCHOR_END: errors

    @app.get("/health")
    async def health():
        return {"status": "ok"}

    @app.get("/metrics")
    async def prometheus():
        return Response(metrics.text(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": model_name, "object": "model", "created": 0,
                                            "owned_by": "minicb"}]}

    @app.post("/v1/completions")
    async def completions(body: CompletionRequest, request: Request):
        return await answer(body, body.prompt, "text_completion", request)

    @app.post("/v1/chat/completions")
    async def chat_completions(body: ChatRequest, request: Request):
        return await answer(body, [m.model_dump() for m in body.messages], "chat.completion", request)

    # ANCHOR: answer
    async def answer(body, prompt, kind, request):
        if body.model != model_name:
            return refuse(f"model {body.model!r} is not served here; this server has "
                          f"{model_name!r}", "model")
        param = "prompt" if kind == "text_completion" else "messages"
        try:     # on a worker thread: tokenizing must not stall the event loop
            ids = await asyncio.to_thread(encoder.encode, prompt, param)
        except ValueError as error:
            return refuse(str(error), param)
        vocab = engine.executor.config.vocab_size
        if any(t >= vocab for t in body.stop_token_ids):
            return refuse("stop_token_ids: ids must be below the vocabulary size "
                          f"{vocab}", "stop_token_ids")
        # OpenAI's default for completions is 16 tokens; a chat answer may fill the
        # rest of what one request can hold (longest_request)
        room = max(1, longest - len(ids))
        default = min(16, room) if kind == "text_completion" else room
        params = body.sampling_params(default)
        submission = Submission(ids, params, asyncio.Queue(),
                                asyncio.get_running_loop())
        if not loop_thread.try_submit(submission):
            return refuse(f"the server holds {max_queued} requests already; "
                          "retry later", None, status=429, kind="rate_limit_exceeded")
        answer = Answer(submission, kind, model_name, len(ids),
                        TextStream(body.stop_strings()), loop_thread,
                        request.is_disconnected,
                        bool((body.stream_options or {}).get("include_usage")))
        try:
            first = await answer.next_output()
            if isinstance(first, ValueError):         # refused by the engine's checks
                return refuse(str(first), param)
            if isinstance(first, Exception):          # a bug on the engine loop
                return openai_error(f"{type(first).__name__}: {first}", None, 500,
                                    "server_error")
            if body.stream:
                return StreamingResponse(answer.events(first),
                                         media_type="text/event-stream")
            return await answer.whole(first)
        except ClientGone:                   # nobody to answer; its request is aborted
            return Response(status_code=499)
    # ANCHOR_END: answer

    return app


def chat_prompt(tokenizer, messages) -> list[int] | str:
    """A conversation (or one question) in the model's own chat template, ready
    for its answer. A model without a template gets the text as it is."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    if not getattr(tokenizer, "chat_template", None):
        return "\n".join(m["content"] for m in messages)
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)       # a dict in transformers 5


# ANCHOR: prompt_encoder
class PromptEncoder:
    """A request's prompt or messages as token ids, made once, on a worker thread.
    It has a tokenizer of its own (the engine loop decodes with the engine's), and
    refuses text that cannot fit in max_model_len before tokenizing it: no token
    stands for more bytes of UTF-8 than the vocabulary's longest entry has."""

    def __init__(self, tokenizer, max_model_len: int):
        self.tokenizer = copy.deepcopy(tokenizer)
        self.lock = threading.Lock()      # a fast tokenizer serves one thread at a time
        longest = max(len(token.encode()) for token in self.tokenizer.get_vocab())
        self.max_model_len, self.max_bytes = max_model_len, max_model_len * longest

    def encode(self, prompt, param: str) -> list[int]:
        """prompt: text, token ids, or chat messages (dicts of strings)."""
        if isinstance(prompt, list) and all(isinstance(t, int) for t in prompt):
            ids = prompt                                     # the engine checks each id
        else:
            texts = [prompt] if isinstance(prompt, str) else \
                [text for m in prompt for text in m.values() if text]
            size = sum(len(text.encode()) for text in texts)
            if size > self.max_bytes:
                raise ValueError(f"{param}: {size} bytes of text cannot fit in "
                                 f"max_model_len {self.max_model_len} tokens")
            with self.lock:
                ids = (self.tokenizer.encode(prompt) if isinstance(prompt, str)
                       else self.chat_ids(prompt))
        if len(ids) >= self.max_model_len:       # no room left for a single token
            raise ValueError(f"{param}: {len(ids)} tokens leave no room for an answer "
                             f"in max_model_len {self.max_model_len}")
        return ids

    def chat_ids(self, messages) -> list[int]:
        try:
            prompt = chat_prompt(self.tokenizer, messages)
        except (TemplateError, ValueError) as error:   # e.g. roles it does not know
            raise ValueError("messages: the model's chat template refused them: "
                             f"{error}") from None
        return self.tokenizer.encode(prompt) if isinstance(prompt, str) else prompt
# ANCHOR_END: prompt_encoder


# ANCHOR: body_limit
class BodyLimit:
    """ASGI middleware: a request body larger than max_bytes is refused (413)
    without being parsed or kept: at once when its Content-Length says so, or as
    soon as it grows past the limit (a chunked body has no length). It raises
    from the body's reader, so the refusal reaches the app's own handlers."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        # uvicorn's HTTP parser has checked that a Content-Length is a number
        declared = int(headers.get(b"content-length", 0))
        received, more = 0, True

        async def refuse():
            # A server that answers and closes while the client is still sending
            # resets the connection, and the client sees that instead of the 413:
            # so read the rest and drop it (up to DRAIN_BYTES), unless the client
            # asked to hear first ("Expect: 100-continue") and will send nothing.
            nonlocal received, more
            if headers.get(b"expect", b"").lower() == b"100-continue" and not received:
                more = False
            while more and received < DRAIN_BYTES:
                message = await receive()
                received += len(message.get("body", b""))
                more = message.get("more_body", False)
            raise HTTPException(413)

        async def limited_receive():
            nonlocal received, more
            if declared > self.max_bytes:
                await refuse()
            message = await receive()
            received += len(message.get("body", b""))
            more = message.get("more_body", False)
            if received > self.max_bytes:
                await refuse()
            return message

        await self.app(scope, limited_receive, send)
# ANCHOR_END: body_limit


# ANCHOR: api_key
class ApiKey:
    """ASGI middleware: a /v1 request must say "Authorization: Bearer <key>"
    (OpenAI's header), or it gets refused() (a 401) without reaching the app. The
    key is compared in constant time: how long a refusal takes tells nothing of
    how much of a guess was right."""

    def __init__(self, app, key: str, refused: Callable[[], Response]):
        self.app, self.key, self.refused = app, key.encode(), refused

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith("/v1"):
            header = dict(scope["headers"]).get(b"authorization", b"")
            scheme, _, given = header.partition(b" ")     # any case (RFC 9110)
            right = hmac.compare_digest(given, self.key)
            if not (scheme.lower() == b"bearer" and right):
                await drained(receive)    # else a client still sending sees a reset
                return await self.refused()(scope, receive, send)
        return await self.app(scope, receive, send)


async def drained(receive):
    """Read what is left of a request's body and drop it (BodyLimit, around it,
    refuses one that grows too large: then the refusal here goes out anyway)."""
    more = True
    with contextlib.suppress(HTTPException):
        while more:
            more = (await receive()).get("more_body", False)
# ANCHOR_END: api_key


def lifespan(engine_loop: EngineLoop):
    """The engine loop runs while the server does: started before the first
    request, stopped (after its current step) when uvicorn shuts down."""
    @contextlib.asynccontextmanager
    async def running(app):
        engine_loop.start()
        yield
        engine_loop.stop()
    return running


def openai_error(message, param, status=400, kind="invalid_request_error", code=None):
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}},
                        status_code=status)


# ANCHOR: longest_request
def longest_request(engine) -> int:
    """The most tokens, prompt and answer, that one request can hold: max_model_len,
    or fewer where the KV cache is smaller (a paged cache of few blocks, stage 4's
    slots). A request that does not say how long its answer may be gets what is
    left of this; a server where not even two tokens fit does not start."""
    def refusal(tokens: int) -> str | None:
        """Why a request of this many tokens is refused, or None if it is not."""
        try:
            engine.make_request([0], SamplingParams(max_tokens=tokens - 1))
        except ValueError as error:
            return str(error)
        return None

    if (why := refusal(2)) is not None:
        raise ValueError(f"this engine can serve no request at all ({why})")
    low, high = 2, engine.config.max_model_len      # low fits; find the most that does
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if refusal(middle) is None else (low, middle - 1)
    return low
# ANCHOR_END: longest_request


def check_address(host: str, port: int):
    """Before a model loads: the port is one, and this process may listen there."""
    if not 0 < port < 2**16:
        raise ValueError(f"--port must be in 1..65535, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET      # as uvicorn chooses
    try:
        with socket.create_server((host, port), family=family):
            pass
    except OSError as error:          # in use, not ours to take, or no such host
        raise ValueError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None


def is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:                 # a host name: it may resolve to anything
        return False


# ANCHOR: requests
# Text without lone surrogates ("\ud800"), which JSON can carry and tokenizers refuse.
Text = Annotated[str, AfterValidator(check_text)]

# OpenAI fields minicb does not implement, with the values that switch them off: a
# client may send them off (some SDKs always do); any other value is a 400 naming
# the field. A field OpenAI does not have at all is a 400 too (extra="forbid").
SWITCHED_OFF = {"logprobs": [False], "top_logprobs": [0], "echo": [False],
                "best_of": [1], "suffix": [""], "logit_bias": [{}],
                "frequency_penalty": [0, 0.0], "presence_penalty": [0, 0.0],
                "tools": [[]], "tool_choice": ["none"],
                "response_format": [{"type": "text"}]}


class Answerable(BaseModel):
    """The fields completions and chat completions share (OpenAI's names, plus
    vLLM's stop_token_ids, top_k and ignore_eos). A field of the wrong type or
    range is refused with a 400 that names it."""
    model_config = ConfigDict(strict=True, extra="forbid")
    model: Text
    max_tokens: int | None = Field(None, ge=1)
    temperature: float = Field(1.0, ge=0, allow_inf_nan=False)
    top_p: float = Field(1.0, gt=0, le=1, allow_inf_nan=False)
    top_k: int = Field(-1, ge=-1)                     # -1 or 0: off
    seed: int | None = Field(None, ge=0, lt=2**64)
    # One string or up to four, as OpenAI allows, each searched for at every token.
    stop: list[Annotated[Text, Field(min_length=1, max_length=256)]] | None = \
        Field(None, max_length=4)
    stop_token_ids: list[Annotated[int, Field(ge=0)]] = Field([], max_length=64)
    ignore_eos: bool = False
    n: int = Field(1, ge=1, le=1)                     # one answer per request
    stream: bool = False
    stream_options: dict | None = None       # {"include_usage": true}: a last chunk
    user: str | None = None                  # who asked, for the client's records
    logprobs: object = None                  # the rest: accepted only switched off
    top_logprobs: object = None
    echo: object = None
    best_of: object = None
    suffix: object = None
    logit_bias: object = None
    frequency_penalty: object = None
    presence_penalty: object = None
    tools: object = None
    tool_choice: object = None
    response_format: object = None

    @field_validator(*SWITCHED_OFF)
    @classmethod
    def switched_off(cls, value, info):
        if value is not None and not any(value == off and type(value) is type(off)
                                         for off in SWITCHED_OFF[info.field_name]):
            raise ValueError(f"{value!r:.40} is not supported by this server")
        return value

    @field_validator("stop", mode="before")
    @classmethod
    def one_stop_is_a_list_of_one(cls, stop):
        return [stop] if isinstance(stop, str) else stop

    def stop_strings(self) -> list[str]:
        return self.stop or []

    def sampling_params(self, default_max_tokens: int) -> SamplingParams:
        # Chat's newer max_completion_tokens wins over max_tokens, as in OpenAI's API.
        limit = getattr(self, "max_completion_tokens", None) or self.max_tokens
        return SamplingParams(max_tokens=limit or default_max_tokens,
                              temperature=self.temperature, top_p=self.top_p,
                              top_k=max(self.top_k, 0), seed=self.seed,
                              stop_token_ids=self.stop_token_ids,
                              ignore_eos=self.ignore_eos)


class CompletionRequest(Answerable):
    prompt: object                            # text or token ids, checked below

    @field_validator("prompt")
    @classmethod
    def text_or_token_ids(cls, prompt):
        if isinstance(prompt, str):
            check_text(prompt)
        elif not (isinstance(prompt, list) and all(type(t) is int for t in prompt)):
            raise ValueError("must be text or a list of token ids, "
                             f"got {type(prompt).__name__}")
        if not prompt:
            raise ValueError("the prompt is empty")
        return prompt


class Message(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    role: Text
    content: Text
    name: Text | None = None                 # a speaker's name; the templates ignore it


class ChatRequest(Answerable):
    messages: list[Message] = Field(min_length=1)
    max_completion_tokens: int | None = Field(None, ge=1)    # OpenAI's newer max_tokens
# ANCHOR_END: requests


# ANCHOR: text_stream
class TextStream:
    """A request's text as it arrives, cut at the first stop string. Only text
    that cannot change is sent: the last characters wait while they could be
    the start of a stop string."""

    def __init__(self, stops: list[str]):
        self.stops, self.stopped = stops, False
        self.hold = max((len(stop) - 1 for stop in stops), default=0)
        self.pending = ""        # arrived, not sent: a stop string can begin only here

    def add(self, piece: str) -> bool:
        """Take the next piece of text; True once a stop string appeared."""
        text = self.pending + piece
        cuts = [i for i in (text.find(stop) for stop in self.stops) if i >= 0]
        if cuts:
            text, self.stopped = text[:min(cuts)], True
        self.pending = text
        return self.stopped

    def take(self, final: bool) -> str:
        """The text that can no longer change, each character once."""
        keep = 0 if final or self.stopped else self.hold
        end = max(0, len(self.pending) - keep)
        piece, self.pending = self.pending[:end], self.pending[end:]
        return piece
# ANCHOR_END: text_stream


class ClientGone(Exception):
    """The client closed its connection before its answer was complete."""


@dataclass
class Answer:
    """One request's answer, in OpenAI's shapes: whole, or as server-sent events."""
    submission: Submission
    kind: str                      # "text_completion" or "chat.completion"
    model: str
    prompt_len: int
    text: TextStream
    engine_loop: EngineLoop
    client_gone: Callable[[], Awaitable[bool]]     # Starlette's request.is_disconnected
    include_usage: bool = False
    checked: float = field(default_factory=time.monotonic)   # when client_gone was asked

    # ANCHOR: outputs
    async def next_output(self):
        """The request's next output. Twice a second, whether outputs come or
        not (a long queue, a long prefill), it asks if the client is still there."""
        while True:
            if time.monotonic() - self.checked > 0.5:
                self.checked = time.monotonic()
                if await self.client_gone():
                    self.engine_loop.abort(self.submission.request_id)
                    raise ClientGone
            try:
                return await asyncio.wait_for(self.submission.outbox.get(), 0.5)
            except TimeoutError:
                pass

    async def outputs(self, first):
        """(StepOutput, text that can no longer change) until the request finishes
        or a stop string ends it. If the reader goes away (the client
        disconnected), the request is aborted."""
        (out, piece), done = first, False
        try:
            while True:
                done = out.finished
                if self.text.add(piece) and not done:    # a stop string: it ends here
                    await self.engine_loop.abort_and_wait(self.submission.request_id)
                    done = True
                yield out, self.text.take(final=done)
                if done:
                    return
                out, piece = await self.next_output()
        finally:
            if not done:                  # nobody is reading any more
                self.engine_loop.abort(self.submission.request_id)
    # ANCHOR_END: outputs

    async def whole(self, first):
        pieces = []
        async for last, piece in self.outputs(first):
            pieces.append(piece)
        if last.finish_reason == "error":
            return openai_error(last.error, None, status=500, kind="server_error")
        text, reason = "".join(pieces), self.finish_reason(last)
        choice = ({"text": text} if self.kind == "text_completion"
                  else {"message": {"role": "assistant", "content": text}})
        return dict(self.envelope(self.kind), choices=[dict(index=0, finish_reason=reason, **choice)],
                    usage=self.usage(last))

    async def events(self, first):
        chunk = "text_completion" if self.kind == "text_completion" else "chat.completion.chunk"
        if self.kind != "text_completion":
            yield self.event(chunk, {"role": "assistant", "content": ""}, None)
        last = first[0]
        try:
            async for last, piece in self.outputs(first):
                if last.finish_reason == "error":         # a failed step: say so, then end
                    error = {"message": last.error, "type": "server_error", "param": None,
                             "code": None}
                    yield f"data: {json.dumps({'error': error})}\n\n"
                    break
                if piece:
                    yield self.event(chunk, piece, None)
                if last.finished or self.text.stopped:
                    yield self.event(chunk, "", self.finish_reason(last))
        except ClientGone:        # seen here before Starlette saw it: nobody to send to
            return
        if self.include_usage and last.finish_reason != "error":  # stream_options: a chunk with usage alone
            body = dict(self.envelope(chunk), choices=[], usage=self.usage(last))
            yield f"data: {json.dumps(body)}\n\n"
        yield "data: [DONE]\n\n"

    def event(self, chunk, content, reason) -> str:
        if chunk == "text_completion":
            choice = {"text": content}
        else:
            choice = {"delta": content if isinstance(content, dict) else {"content": content}}
        body = dict(self.envelope(chunk), choices=[dict(index=0, finish_reason=reason, **choice)])
        return f"data: {json.dumps(body)}\n\n"

    def envelope(self, kind) -> dict:
        prefix = "cmpl" if self.kind == "text_completion" else "chatcmpl"
        return dict(id=f"{prefix}-{self.submission.request_id}", object=kind, created=int(time.time()),
                    model=self.model)

    def finish_reason(self, out) -> str:
        if self.text.stopped or out.finish_reason in ("stop", "eos"):
            return "stop"
        return out.finish_reason or "stop"

    def usage(self, out) -> dict:
        n = len(out.output_token_ids)
        return dict(prompt_tokens=self.prompt_len, completion_tokens=n, total_tokens=self.prompt_len + n)


class ServerThread:
    """A server on a free loopback port, in a thread of this process: for tests
    and notebooks that want a real HTTP server beside their own code.

        with ServerThread(LLMEngine(path, engine="paged"), "tiny") as server:
            ...  # server.url, server.engine_loop
    """

    def __init__(self, engine, model_name: str, max_queued: int = 256,
                 max_request_bytes: int = MAX_REQUEST_BYTES, api_key: str | None = None):
        self.port = free_port()
        self.app = make_app(engine, model_name, max_queued, max_request_bytes, api_key)
        self.engine_loop = self.app.state.engine_loop
        self.prompt_encoder = self.app.state.prompt_encoder
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                                    log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"the server on port {self.port} did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=60)


class ServerProcess:
    """``python -m minicb serve`` in a process of its own on a free loopback port,
    as a server is deployed: the client's timing and the server's work do not
    share one interpreter. Engine options become the command's flags.

        with ServerProcess("smollm2", engine="paged", max_num_seqs=8) as server:
            ...  # server.url
    """

    def __init__(self, model, engine: str = "paged", model_name: str | None = None, **engine_options):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [sys.executable, "-m", "minicb", "serve", "--model", str(model), "--engine", engine,
                        "--port", str(self.port), "--served-model-name", model_name or str(model)]
        for name, value in engine_options.items():
            if isinstance(value, bool):     # --flag, or --no-flag where the default is on
                if value != EngineConfig.__dataclass_fields__[name].default:
                    self.command.append(("--" if value else "--no-") + name.replace("_", "-"))
            else:
                self.command += ["--" + name.replace("_", "-"), str(value)]
        self.log = tempfile.TemporaryFile()         # its output, shown if it fails to start

    def __enter__(self):
        self.process = subprocess.Popen(self.command, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=1):
                    return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    self.log.seek(0)
                    raise RuntimeError(f"{' '.join(self.command)} did not start:\n"
                                       + self.log.read().decode(errors="replace")[-2000:]) from None
                time.sleep(0.2)

    def __exit__(self, *exc):
        self.process.terminate()               # SIGTERM: uvicorn shuts down cleanly
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

