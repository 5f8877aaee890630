"""OpenAI's shapes: the request bodies (pydantic models, so a malformed field is
refused before it reaches the engine), the errors, the chat template, the
prompt's tokenization off the event loop (``PromptEncoder``), and an answer,
whole or streamed as server-sent events (``Answer``).
"""
import asyncio
import copy
import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi.responses import JSONResponse
from jinja2 import TemplateError
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from ...llm import chat_prompt, check_text
from ...sampling_params import SamplingParams
from .engine_loop import EngineLoop, Submission


def openai_error(message, param, status=400, kind="invalid_request_error", code=None):
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}},
                        status_code=status)


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
