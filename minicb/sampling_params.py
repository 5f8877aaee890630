"""SamplingParams: how a request asks its tokens to be picked, and when to stop;
and the checks every option of minicb takes at the door (a count is a whole
number, a number is finite, a bad value is named, briefly). Pure Python: the
command line's parser reads these without loading torch."""
import dataclasses
import math
import numbers
import operator
from dataclasses import dataclass, field


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
