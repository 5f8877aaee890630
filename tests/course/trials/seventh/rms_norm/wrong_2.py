"""Misconception: "eps only keeps the division away from zero, so it goes on
the root mean square, x / (rms + eps)", as some LayerNorm code writes
std + eps, instead of under the root, x / sqrt(mean(x^2) + eps). For rows of
ordinary size the two differ by about eps / (2 rms) relatively, below fp16's
and bf16's rounding and often below fp32 tolerances, so typical tests pass;
for rows whose mean square is comparable to eps they differ a lot.

Concrete input: x = full((1, 64), 1e-3), residual None, weight ones,
eps = 1e-6 (fp32): the contract gives 1e-3 / sqrt(1e-6 + 1e-6) = 0.7071;
this gives 1e-3 / (1e-3 + 1e-6) = 0.9990.
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
    rms = tl.sqrt(tl.sum(x * x, axis=0) / hidden)
    w = tl.load(W + cols, mask=inside, other=0.0)
    out = (x / (rms + eps)).to(OUT.dtype.element_ty) * w
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
