"""Choosing how a step computes what is not attention or a matmul.

The plain model's operations ("plain", the default) are the readable ones:
the residual add, RMSNorm, rotary and SwiGLU's middle written as PyTorch ops,
and the sampler's greedy pick with its non-finite check (``kernels/reference.py``).
The fused ones ("fused") are Triton kernels that do each in one pass over the
data (``kernels/norm.py``, ``rotary.py``, ``activation.py``, ``argmax.py``,
chapter 8). Both give the same functions with the same signatures, as the
attention backends do, so the model asks for ``ops.add_rms_norm`` and does not
care which it got; the tests hold the two to the same tokens.
"""
from types import SimpleNamespace

import torch
from torch import nn

from .kernels import reference

LAYER_OP_NAMES = ("add_rms_norm", "rotary", "silu_mul")     # a decoder layer's
OP_NAMES = LAYER_OP_NAMES + ("finite_argmax",)              # and the sampler's


def layer_ops(fused: bool = False) -> SimpleNamespace:
    if not fused:
        return SimpleNamespace(**{name: getattr(reference, name) for name in OP_NAMES})
    # Loaded only when asked for, as the attention kernels are (minicb/attention.py).
    from .kernels import activation, argmax, norm, rotary
    return SimpleNamespace(add_rms_norm=norm.add_rms_norm, rotary=rotary.rotary,
                           silu_mul=activation.silu_mul, finite_argmax=argmax.finite_argmax)


class Separate:
    """Linears that read the same input (q, k and v; gate and up), each its own
    matmul, as the checkpoint holds them. Not a module: the linears are the
    layer's own, under the checkpoint's names."""

    def __init__(self, *linears: nn.Linear):
        self.linears = linears

    def __call__(self, x):
        return tuple(linear(x) for linear in self.linears)


# ANCHOR: joined
class JoinedLinear(nn.Module):
    """The same linears as one matmul: their weights stacked into one matrix.
    One larger matmul reads the input once and keeps the GPU busier than several
    small ones (chapter 8). A call returns each linear's output, as Separate's does."""

    def __init__(self, *linears: nn.Linear):
        super().__init__()
        self.sizes = [len(linear.weight) for linear in linears]    # under TP: a share
        self.weight = joined([linear.weight for linear in linears])
        has_bias = linears[0].bias is not None
        self.bias = joined([linear.bias for linear in linears]) if has_bias else None

    def forward(self, x):
        out = nn.functional.linear(x, self.weight, self.bias)
        return out.split(self.sizes, dim=-1)


def joined(tensors) -> nn.Parameter:
    # detached: a loaded weight requires grad, and cat's graph would keep the
    # separate weights alive beside the joined copy (twice the memory)
    return nn.Parameter(torch.cat([t.detach() for t in tensors]), requires_grad=False)
# ANCHOR_END: joined
