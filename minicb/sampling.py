"""SamplingParams and the one sampler every stage uses."""
import math
import operator
from dataclasses import dataclass, field

import torch


# ANCHOR: sampling_params
@dataclass
class SamplingParams:
    """How to pick each next token, and when to stop (vLLM's names).

    temperature 0 means greedy. top_k 0 and top_p 1.0 switch those filters
    off. seed makes one request's sampling reproducible whatever else is in
    its batch. Generation stops at max_tokens, at an EOS token (unless
    ignore_eos) or at any of stop_token_ids.
    """
    max_tokens: int = 16
    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int | None = None
    stop_token_ids: list[int] = field(default_factory=list)
    ignore_eos: bool = False

    def __post_init__(self):
        # bool is an int in Python: top_k=True must not pass for top_k=1.
        def is_int(x):
            return isinstance(x, int) and not isinstance(x, bool)

        def is_real(x):
            return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)

        if not is_int(self.max_tokens) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be an integer >= 1, got {self.max_tokens!r}")
        if not is_real(self.temperature) or self.temperature < 0:
            raise ValueError(f"temperature must be a finite number >= 0, got {self.temperature!r}")
        if not is_int(self.top_k) or self.top_k < 0:
            raise ValueError(f"top_k must be an integer >= 0 (0 = off), got {self.top_k!r}")
        if not is_real(self.top_p) or not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if self.seed is not None and not (is_int(self.seed) and 0 <= self.seed < 2**64):
            raise ValueError(f"seed must be an integer in [0, 2**64) or None, got {self.seed!r}")
        if isinstance(self.stop_token_ids, (str, bytes)) or not hasattr(self.stop_token_ids, "__iter__"):
            raise ValueError(f"stop_token_ids must be a list of token ids, got {self.stop_token_ids!r}")
        self.stop_token_ids = [self.check_token_id(t) for t in self.stop_token_ids]
        if not isinstance(self.ignore_eos, bool):
            raise ValueError(f"ignore_eos must be True or False, got {self.ignore_eos!r}")

    @staticmethod
    def check_token_id(token) -> int:
        try:
            index = operator.index(token)           # ints, numpy ints, 0-d integer tensors
        except TypeError:
            index = None
        if index is None or isinstance(token, bool) or index < 0:
            raise ValueError(f"stop_token_ids: {token!r} is not a token id (an integer >= 0)")
        return index

    @property
    def greedy(self) -> bool:
        return self.temperature == 0
# ANCHOR_END: sampling_params


# ANCHOR: sampler
class Sampler:
    """logits [B, V] (fp32) + one SamplingParams per row -> next token ids [B].

    Each request owns a torch.Generator (seeded if it asked for a seed), so
    its random draws do not depend on which other requests share the batch.
    """

    def __call__(self, logits, params: list[SamplingParams], generators: list) -> list:
        """One token per row, or, for a row whose sampling raised, the exception:
        one request's failure must not cost the others their tokens."""
        if all(p.greedy for p in params):
            return logits.argmax(dim=-1).tolist()
        return [self._sample_row_or_error(row, p, g) for row, p, g in zip(logits, params, generators)]

    def on_device(self, logits, params: list[SamplingParams], generators: list):
        """The same tokens as a tensor on logits' device, and {row: exception}
        for rows that failed (their entry in the tensor is 0). A greedy batch
        never leaves the device, so the host need not wait for it."""
        if all(p.greedy for p in params):
            return logits.argmax(dim=-1), {}
        tokens = self(logits, params, generators)
        errors = {i: t for i, t in enumerate(tokens) if isinstance(t, Exception)}
        return torch.tensor([0 if i in errors else t for i, t in enumerate(tokens)], device=logits.device), errors

    @classmethod
    def _sample_row_or_error(cls, logits, p: SamplingParams, generator):
        try:
            return cls._sample_row(logits, p, generator)
        except Exception as error:                  # the request fails alone (Request.fail)
            return error

    @staticmethod
    def _sample_row(logits, p: SamplingParams, generator) -> int:
        if p.greedy:
            return int(logits.argmax())
        # Shift the best logit to 0 first: divided by a tiny temperature, the rest go to
        # -inf (never selected) instead of the best going to +inf (and softmax to nan).
        logits = (logits - logits.max()) / p.temperature
        if p.top_k:
            kth_best = torch.topk(logits, min(p.top_k, logits.numel())).values[-1]
            logits = logits.masked_fill(logits < kth_best, float("-inf"))
        probs = torch.softmax(logits, dim=-1)
        if p.top_p < 1.0:
            probs = keep_top_p(probs, p.top_p)
        return int(torch.multinomial(probs.cpu(), 1, generator=generator))
# ANCHOR_END: sampler


def keep_top_p(probs, top_p):
    """Zero every token outside the smallest set whose probability reaches top_p."""
    sorted_probs, order = probs.sort(descending=True)
    mass_before = sorted_probs.cumsum(0) - sorted_probs      # probability of strictly better tokens
    sorted_probs[mass_before >= top_p] = 0.0                 # the best token always stays
    kept = torch.zeros_like(probs).scatter_(0, order, sorted_probs)
    return kept / kept.sum()


def make_generator(params: SamplingParams, engine_generator: torch.Generator) -> torch.Generator:
    """A request's own random stream: from its seed, else drawn from the engine's."""
    seed = params.seed if params.seed is not None else int(
        torch.randint(0, 2**62, (1,), generator=engine_generator))
    return torch.Generator().manual_seed(seed)
