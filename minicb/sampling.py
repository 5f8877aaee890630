"""The Sampler, shared by every stage: it reads each request's SamplingParams
(minicb/sampling_params.py) and picks one token per row."""
import numpy as np
import torch

from .kernels import reference
from .sampling_params import SamplingParams


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
