"""Misconception: "the mean of the squares is the tile's sum over the tile's
width": the kernel divides the sum of squares by BLOCK, the power of two the
row was padded to, instead of by hidden. The padding's squares are 0, so the
sum is right, but the divisor is too large whenever hidden is not a power of
two, and every row is scaled by sqrt(BLOCK / hidden). With the usual hidden
sizes in tests (64, 128, 4096) it is exact.

Concrete input: hidden = 48 (BLOCK 64), x = ones(1, 48), residual None,
weight ones, eps 1e-6: the contract gives out = 1.0 everywhere; this gives
sqrt(64/48) = 1.1547.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _kernel(X, RES, W, OUT, NEWR, sx, sr, so, sn, hidden, eps,
            HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < hidden
    x = tl.load(X + row * sx + cols, mask=inside, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        x += tl.load(RES + row * sr + cols, mask=inside, other=0.0).to(tl.float32)
    x = x.to(NEWR.dtype.element_ty)
    tl.store(NEWR + row * sn + cols, x, mask=inside)
    x = x.to(tl.float32)
    mean_sq = tl.sum(x * x, axis=0) / BLOCK
    w = tl.load(W + cols, mask=inside, other=0.0)
    out = (x * tl.rsqrt(mean_sq + eps)).to(OUT.dtype.element_ty) * w
    tl.store(OUT + row * so + cols, out, mask=inside)


def add_rms_norm(x, residual, weight, eps):
    if x.stride(-1) != 1 or (residual is not None and residual.stride(-1) != 1):
        raise ValueError("the last axis of x and residual must be contiguous")
    rows, hidden = x.shape
    out, new_residual = torch.empty_like(x), torch.empty_like(x)
    res = x if residual is None else residual
    _kernel[(rows,)](x, res, weight, out, new_residual,
                     x.stride(0), res.stride(0), out.stride(0), new_residual.stride(0),
                     hidden, eps, HAS_RESIDUAL=residual is not None,
                     BLOCK=triton.next_power_of_2(hidden))
    return out, new_residual
