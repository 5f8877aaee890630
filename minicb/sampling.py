"""SamplingParams and the one sampler every stage uses."""
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
        if not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be an integer >= 1, got {self.max_tokens!r}")
        if not self.temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature!r}")
        if not isinstance(self.top_k, int) or self.top_k < 0:
            raise ValueError(f"top_k must be an integer >= 0 (0 = off), got {self.top_k!r}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        self.stop_token_ids = list(self.stop_token_ids)

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

    def __call__(self, logits, params: list[SamplingParams], generators: list) -> list[int]:
        if all(p.greedy for p in params):
            return logits.argmax(dim=-1).tolist()
        return [self._sample_row(row, p, g) for row, p, g in zip(logits, params, generators)]

    def on_device(self, logits, params: list[SamplingParams], generators: list) -> torch.Tensor:
        """The same tokens as a tensor on logits' device. A greedy batch never
        leaves the device, so the host need not wait for it."""
        if all(p.greedy for p in params):
            return logits.argmax(dim=-1)
        return torch.tensor(self(logits, params, generators), device=logits.device)

    @staticmethod
    def _sample_row(logits, p: SamplingParams, generator) -> int:
        if p.greedy:
            return int(logits.argmax())
        logits = logits / p.temperature
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
