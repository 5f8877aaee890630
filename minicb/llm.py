"""The front door: ``LLM`` runs a list of prompts offline on the chosen stage."""
import operator
import time

import torch
from tqdm.auto import tqdm

from .checkpoint import load_model
from .config import EngineConfig
from .metrics import RunMetrics
from .request import Request, RequestOutput
from .sampling import SamplingParams, make_generator
from .stages.single import SingleEngine
from .stages.static import StaticEngine

ENGINES = {"single": SingleEngine, "static": StaticEngine}


# ANCHOR: llm
class LLM:
    """Offline generation, vLLM-shaped::

        llm = LLM(path, engine="static", max_batch_size=8)
        outputs = llm.generate(prompts, SamplingParams(max_tokens=32))

    ``engine`` picks the batching stage; every other keyword is an
    ``EngineConfig`` field (see ``minicb.config`` for defaults). After each
    ``generate`` call, ``llm.last_run`` holds that run's ``RunMetrics``.
    """

    def __init__(self, model: str, engine: str = "static", **options):
        from transformers import AutoTokenizer

        self.config = EngineConfig(engine=engine, **options)
        self.model = load_model(model, self.config.dtype, self.config.device)
        self.config.settle_max_model_len(self.model.config.max_context)
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.engine = ENGINES[engine](self.model, self.config)
        self.generator = torch.Generator().manual_seed(self.config.seed)
        self.last_run: RunMetrics | None = None

    def generate(self, prompts, sampling_params=None, use_tqdm=False) -> list[RequestOutput]:
        """prompts: strings or lists of token ids. sampling_params: one
        SamplingParams for all, or a list with one per prompt. Every prompt is
        checked before any work runs; outputs come back in prompt order."""
        if isinstance(prompts, str) or (prompts and isinstance(prompts[0], int)):
            prompts = [prompts]
        requests = self.make_requests(prompts, sampling_params)
        self.engine.steps = []
        self.engine.progress = tqdm(total=len(requests), desc=self.config.engine,
                                    disable=not use_tqdm)
        started = time.perf_counter()
        with self.engine.progress:
            self.engine.run(requests)
        self.last_run = RunMetrics.from_run(requests, self.engine.steps, time.perf_counter() - started)
        return [self.to_output(r) for r in requests]
# ANCHOR_END: llm

    # ANCHOR: validation
    def make_requests(self, prompts, sampling_params) -> list[Request]:
        params = self.params_per_prompt(prompts, sampling_params)
        token_ids = [self.check_prompt(i, p, sp) for i, (p, sp) in enumerate(zip(prompts, params))]
        now = time.perf_counter()
        requests = []
        for prompt, ids, sp in zip(prompts, token_ids, params):
            request = Request(ids, sp, self.model.config.eos_token_ids,
                              prompt=prompt if isinstance(prompt, str) else None,
                              generator=make_generator(sp, self.generator))
            request.metrics.arrival_time = now
            requests.append(request)
        return requests

    @staticmethod
    def params_per_prompt(prompts, sampling_params) -> list[SamplingParams]:
        if sampling_params is None:
            sampling_params = SamplingParams()
        if isinstance(sampling_params, SamplingParams):
            return [sampling_params] * len(prompts)
        params = list(sampling_params)
        if len(params) != len(prompts):
            raise ValueError(f"got {len(params)} sampling_params for {len(prompts)} prompts")
        for i, sp in enumerate(params):
            if not isinstance(sp, SamplingParams):
                raise ValueError(f"request {i}: sampling_params must be SamplingParams, got {sp!r}")
        return params

    def check_prompt(self, i, prompt, params: SamplingParams) -> list[int]:
        """Token ids of one prompt, or a ValueError naming request i and the bad value."""
        ids = self.tokenizer.encode(prompt) if isinstance(prompt, str) else list(prompt)
        if not ids:
            raise ValueError(f"request {i}: the prompt is empty")
        ids = [self.check_token_id(i, t) for t in ids]
        if len(ids) + params.max_tokens > self.config.max_model_len:
            raise ValueError(f"request {i}: prompt of {len(ids)} tokens + max_tokens {params.max_tokens} "
                             f"exceeds max_model_len {self.config.max_model_len}")
        return ids
    def check_token_id(self, i, token) -> int:
        try:
            token = operator.index(token)           # ints, numpy ints, 0-d integer tensors
        except TypeError:
            raise ValueError(f"request {i}: token id {token!r} is not an integer") from None
        if not 0 <= token < self.model.config.vocab_size:
            raise ValueError(f"request {i}: token id {token} is outside the vocabulary "
                             f"[0, {self.model.config.vocab_size})")
        return token
    # ANCHOR_END: validation

    def to_output(self, r: Request) -> RequestOutput:
        return RequestOutput(r.request_id, r.prompt, r.prompt_token_ids, r.output_token_ids,
                             self.tokenizer.decode(r.output_token_ids, skip_special_tokens=True),
                             r.finish_reason, r.metrics)
