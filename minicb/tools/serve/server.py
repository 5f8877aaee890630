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
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.exceptions import HTTPException

from ...config import EngineConfig
from ...executors.parallel import free_port
from .door import MAX_REQUEST_BYTES, ApiKey, BodyLimit, longest_request
from .engine_loop import EngineLoop, ServerMetrics, Submission
from .protocol import (Answer, ChatRequest, ClientGone, CompletionRequest, PromptEncoder, TextStream,
                       openai_error)


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
