"""SamplingParams: how a request asks its tokens to be picked, and when to stop;
and the Sampler that reads them, shared by every stage."""
import dataclasses
import math
import numbers
import operator
from dataclasses import dataclass, field

import numpy as np
import torch

from .kernels import reference


# bool is an int in Python: top_k=True must not pass for top_k=1.
def is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def as_integer(x) -> int | None:
    """x as an int if it is an integer (a Python, numpy or 0-d tensor one), else
    None. A bool is not, though Python counts True as 1, nor a bool tensor."""
    if isinstance(x, bool) or str(getattr(x, "dtype", "")) in ("torch.bool", "bool"):
        return None
    try:
        return operator.index(x)
    except (TypeError, RuntimeError, NotImplementedError):    # RuntimeError: a tensor with no values (meta)
        return None


def short(value, limit=60) -> str:
    """repr(value), cut to limit characters: an error names a bad value, not a megabyte of it."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def is_real(x) -> bool:
    """A finite int or float (not a bool, nan or infinity, nor an int too large
    to be a float, such as 10**400)."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def as_kind(value, kind):
    """value as an instance of kind, or None if it is not one."""
    if kind is bool:
        return bool(value) if type(value).__name__ in ("bool", "bool_") else None
    if kind is int:
        return as_integer(value)
    if kind is float:
        real = isinstance(value, numbers.Real) and as_kind(value, bool) is None
        return float(value) if real and is_real(float_or_inf(value)) else None
    if kind is type(None):
        return None
    return value if isinstance(value, kind) else None


def float_or_inf(value) -> float:
    """float(value), or inf for an integer too large to be a float (10**400)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


# ANCHOR: sampling_params
@dataclass
class SamplingParams:
    """How to pick each next token, and when to stop (vLLM's names).

    temperature 0 means greedy, and so does any temperature below 1e-5 (as in
    vLLM): so sharp a distribution is greedy but for near-ties, and in fp32 a
    temperature under about 1e-45 is 0, which would turn the logits into nan.
    top_k 0 and top_p 1.0 switch those filters off; the best token always
    survives top_p, however small. seed makes one request's sampling reproducible whatever else is in
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
        self.take_numpy_scalars()
        if not is_int(self.max_tokens) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be an integer >= 1, got {short(self.max_tokens)}")
        if not is_real(self.temperature) or self.temperature < 0:
            raise ValueError(f"temperature must be a finite number >= 0, got {short(self.temperature)}")
        if not is_int(self.top_k) or self.top_k < 0:
            raise ValueError(f"top_k must be an integer >= 0 (0 = off), got {short(self.top_k)}")
        if not is_real(self.top_p) or not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {short(self.top_p)}")
        if self.seed is not None and not (is_int(self.seed) and 0 <= self.seed < 2**64):
            raise ValueError(f"seed must be an integer in [0, 2**64) or None, got {short(self.seed)}")
        if isinstance(self.stop_token_ids, (str, bytes)) or not hasattr(self.stop_token_ids, "__iter__"):
            raise ValueError(f"stop_token_ids must be a list of token ids, got {short(self.stop_token_ids)}")
        self.stop_token_ids = [self.check_token_id(t) for t in self.stop_token_ids]
        if not isinstance(self.ignore_eos, bool):
            raise ValueError(f"ignore_eos must be True or False, got {short(self.ignore_eos)}")

    def take_numpy_scalars(self):
        """numpy's and torch's numbers as Python's (np.int64(8) is a max_tokens of 8),
        as EngineConfig takes them; anything else is left for the checks to refuse."""
        for name, kind in (("max_tokens", int), ("temperature", float), ("top_k", int), ("top_p", float),
                           ("seed", int), ("ignore_eos", bool)):
            value = as_kind(getattr(self, name), kind)
            if value is not None:
                setattr(self, name, value)

    @staticmethod
    def check_token_id(token) -> int:
        index = as_integer(token)
        if index is None or index < 0:
            raise ValueError(f"stop_token_ids: {short(token)} is not a token id (an integer >= 0)")
        return index

    def copy(self) -> "SamplingParams":
        """A checked copy (every rule above is applied again): each request keeps
        its own, so changing the caller's object afterwards cannot reach a step."""
        return dataclasses.replace(self)
# ANCHOR_END: sampling_params


GREEDY_BELOW = 1e-5       # a temperature this low samples greedily (the Sampler, below)


def make_generator(params: SamplingParams, device) -> torch.Generator | None:
    """A request's own random stream, on the device its logits are on, if it
    brought a seed; None: it draws from the engine's (the Sampler's)."""
    if params.seed is None:
        return None
    return torch.Generator(device).manual_seed(params.seed)


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
