"""Residual add and RMSNorm in one kernel (the fast step, chapter 8).

A decoder layer adds each block's output to the residual stream and
normalises the sum for the next block. As PyTorch ops that is an add, a cast
to fp32, a square, a mean, an rsqrt, two multiplies and a cast back: each a
kernel that reads and writes the whole [N, hidden] tensor. Here one program
owns one row: it reads the block's output and the residual once, writes the
new residual and the normalised row once, and sums the squares in fp32.

It rounds where the plain model rounds (the residual to the model's dtype,
the normalised row before the weight multiplies it), so the two agree to the
last bit in most rows and within a rounding step in the rest.
"""
import torch
import triton
import triton.language as tl


# ANCHOR: kernel
@triton.jit
def _add_rms_norm_kernel(X, RESIDUAL, WEIGHT, OUT, NEW_RESIDUAL,
                         stride_x, stride_r, stride_o, stride_n, hidden, eps,
                         HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < hidden
    x = tl.load(X + row * stride_x + cols, mask=inside, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        residual = tl.load(RESIDUAL + row * stride_r + cols, mask=inside, other=0.0)
        x += residual.to(tl.float32)
    # The residual stream stays in the model's dtype: round before normalising.
    x = x.to(NEW_RESIDUAL.dtype.element_ty)
    tl.store(NEW_RESIDUAL + row * stride_n + cols, x, mask=inside)
    x = x.to(tl.float32)
    scale = tl.rsqrt(tl.sum(x * x, axis=0) / hidden + eps)
    weight = tl.load(WEIGHT + cols, mask=inside, other=0.0)
    normed = (x * scale).to(OUT.dtype.element_ty) * weight
    tl.store(OUT + row * stride_o + cols, normed, mask=inside)
# ANCHOR_END: kernel


# ANCHOR: wrapper
def add_rms_norm(x, residual, weight, eps):
    """x, residual [N, hidden] (residual None: the first layer's); weight [hidden].
    Returns (RMSNorm(x + residual) * weight, x + residual), each [N, hidden]."""
    if x.stride(-1) != 1 or (residual is not None and residual.stride(-1) != 1):
        raise ValueError("the last (hidden) axis of x and residual must be contiguous")
    rows, hidden = x.shape
    out, new_residual = torch.empty_like(x), torch.empty_like(x)
    source = residual if residual is not None else x      # (unread without a residual)
    _add_rms_norm_kernel[(rows,)](
        x, source, weight, out, new_residual,
        x.stride(0), source.stride(0), out.stride(0), new_residual.stride(0),
        hidden, eps,
        HAS_RESIDUAL=residual is not None, BLOCK=triton.next_power_of_2(hidden),
        num_warps=8 if hidden >= 2048 else 4)
    return out, new_residual
# ANCHOR_END: wrapper
