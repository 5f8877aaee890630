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

This file ties the app together (``make_app``); the engine loop is in
``engine_loop.py``, OpenAI's shapes in ``protocol.py`` and what is checked at
the door in ``door.py``.
"""
import asyncio
import contextlib
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import uvicorn
from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.exceptions import HTTPException

from ...config import EngineConfig
from ...executors.parallel import free_port
from .door import MAX_REQUEST_BYTES, ApiKey, BodyLimit, check_api_key, longest_request
from .engine_loop import EngineLoop, ServerMetrics, Submission
from .protocol import (Answer, ChatRequest, ClientGone, CompletionRequest, PromptEncoder, TextStream,
                       openai_error)


# ---------------------------------------------------------------- the HTTP side
# The routes and handlers are module-level functions that find the server through
# request.app.state, never closures over the engine: FastAPI caches every endpoint
# function for the life of the process, and an endpoint that held the engine would
# keep its weights and KV cache alive after its server ended.
routes = APIRouter()


def make_app(engine, model_name: str, max_queued: int = 256,
             max_request_bytes: int = MAX_REQUEST_BYTES, api_key: str | None = None):
    """The FastAPI app: OpenAI's completions, chat completions and models
    endpoints, and a health check, over one EngineLoop. A body over
    max_request_bytes is refused (413) before it is parsed; with an api_key,
    every /v1 request must bring it (401 otherwise)."""
    if api_key is not None:
        check_api_key(api_key)
    served = Served(engine, model_name, max_queued, max_request_bytes)
    app = FastAPI(title="minicb", lifespan=lifespan(served.engine_loop))
    app.state.served, app.state.engine_loop = served, served.engine_loop
    app.state.prompt_encoder, app.state.longest_request = served.encoder, served.longest
    if api_key is not None:
        app.add_middleware(ApiKey, key=api_key, refused=lambda: served.refuse(
            "Incorrect API key provided: send 'Authorization: Bearer <key>' with the "
            "server's key", None, 401, code="invalid_api_key"))
    app.add_middleware(BodyLimit, max_bytes=max_request_bytes)     # outermost: first to run
    app.add_exception_handler(RequestValidationError, bad_request)
    app.add_exception_handler(HTTPException, http_error)
    app.include_router(routes)
    return app


# ANCHOR: errors
async def bad_request(request: Request, error: RequestValidationError):
    refuse = request.app.state.served.refuse
    first = error.errors()[0]
    if first["type"] == "json_invalid":             # its loc is a character offset
        return refuse(f"the body is not valid JSON: {first['ctx']['error']}", None)
    param = ".".join(str(p) for p in first["loc"] if p != "body") or None
    message = ("unrecognized request argument" if first["type"] == "extra_forbidden"
               else first["msg"].removeprefix("Value error, "))
    return refuse(f"{param or 'body'}: {message}", param)


async def http_error(request: Request, error: HTTPException):
    """Starlette's own refusals in OpenAI's shape: a body too large, one that
    is not JSON at all (invalid UTF-8, nested too deep), an unknown path."""
    served = request.app.state.served
    message = error.detail
    if error.status_code == 413:
        message = f"the request body is larger than {served.max_request_bytes} bytes"
    response = served.refuse(message, None, error.status_code)
    response.headers.update(error.headers or {})      # a 405's Allow
    return response
# ANCHOR_END: errors


@routes.get("/health")
async def health():
    return {"status": "ok"}


@routes.get("/metrics")
async def prometheus(request: Request):
    return Response(request.app.state.served.metrics.text(), media_type=CONTENT_TYPE_LATEST)


@routes.get("/v1/models")
async def models(request: Request):
    return {"object": "list", "data": [{"id": request.app.state.served.model_name, "object": "model",
                                        "created": 0, "owned_by": "minicb"}]}


@routes.post("/v1/completions")
async def completions(body: CompletionRequest, request: Request):
    return await request.app.state.served.answer(body, body.prompt, "text_completion", request)


@routes.post("/v1/chat/completions")
async def chat_completions(body: ChatRequest, request: Request):
    messages = [m.model_dump() for m in body.messages]
    return await request.app.state.served.answer(body, messages, "chat.completion", request)


class Served:
    """One server's engine loop, prompt encoder and limits: what its routes need."""

    def __init__(self, engine, model_name: str, max_queued: int, max_request_bytes: int):
        self.longest = longest_request(engine)         # before the engine loop owns the engine
        self.engine_loop = EngineLoop(engine, max_queued)
        self.metrics = self.engine_loop.metrics = ServerMetrics(self.engine_loop)
        self.encoder = PromptEncoder(engine.tokenizer, engine.config.max_model_len)
        self.vocab = engine.executor.config.vocab_size
        self.model_name, self.max_queued = model_name, max_queued
        self.max_request_bytes = max_request_bytes

    def refuse(self, message, param, status=400, kind="invalid_request_error", code=None):
        self.metrics.rejected.labels(str(status)).inc()
        return openai_error(message, param, status, kind, code)

    # ANCHOR: answer
    async def answer(self, body, prompt, kind, request):
        if body.model != self.model_name:
            return self.refuse(f"model {body.model!r} is not served here; this "
                               f"server has {self.model_name!r}", "model")
        param = "prompt" if kind == "text_completion" else "messages"
        try:     # on a worker thread: tokenizing must not stall the event loop
            ids = await asyncio.to_thread(self.encoder.encode, prompt, param)
        except ValueError as error:
            return self.refuse(str(error), param)
        if any(t >= self.vocab for t in body.stop_token_ids):
            return self.refuse("stop_token_ids: ids must be below the vocabulary size "
                               f"{self.vocab}", "stop_token_ids")
        # OpenAI's default for completions is 16 tokens; a chat answer may fill the
        # rest of what one request can hold (longest_request)
        room = max(1, self.longest - len(ids))
        default = min(16, room) if kind == "text_completion" else room
        params = body.sampling_params(default)
        submission = Submission(ids, params, asyncio.Queue(),
                                asyncio.get_running_loop())
        if not self.engine_loop.try_submit(submission):
            return self.refuse(f"the server holds {self.max_queued} requests already; "
                               "retry later", None, status=429,
                               kind="rate_limit_exceeded")
        answer = Answer(submission, kind, self.model_name, len(ids),
                        TextStream(body.stop_strings()), self.engine_loop,
                        request.is_disconnected,
                        bool((body.stream_options or {}).get("include_usage")))
        try:
            first = await answer.next_output()
            if isinstance(first, ValueError):         # refused by the engine's checks
                return self.refuse(str(first), param)
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


def lifespan(engine_loop: EngineLoop):
    """The engine loop runs while the server does: started before the first
    request, stopped (after its current step) when uvicorn shuts down."""
    @contextlib.asynccontextmanager
    async def running(app):
        engine_loop.start()
        yield
        engine_loop.stop()
    return running


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
