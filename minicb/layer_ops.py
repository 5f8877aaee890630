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
