"""Misconception: rows are taken to be packed, row r starting at r * hidden, so only the
last axis is checked for contiguity. Wrong for strided rows: x = qkv[:, :hidden] of a
wider [rows, 3 * hidden] tensor reads the wrong numbers from row 1 on."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_rms_norm_kernel(X, R, W, OUT, NEW_R, hidden, eps,
                         HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < hidden
    offsets = row * hidden + cols                  # a row of hidden values, then the next
    dtype = X.dtype.element_ty
    s = tl.load(X + offsets, mask=inside, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        s = s + tl.load(R + offsets, mask=inside, other=0.0).to(tl.float32)
        s = s.to(dtype)
        tl.store(NEW_R + offsets, s, mask=inside)
        s = s.to(tl.float32)
    mean_sq = tl.sum(s * s, axis=0) / hidden
    normed = (s * tl.math.rsqrt(mean_sq + eps)).to(dtype).to(tl.float32)
    w = tl.load(W + cols, mask=inside, other=0.0).to(tl.float32)
    tl.store(OUT + offsets, (w * normed).to(OUT.dtype.element_ty), mask=inside)


def add_rms_norm(x, residual, weight, eps):
    """x, residual [rows, hidden] (residual may be None: the first layer), weight
    [hidden]. Return (out, new_residual): new_residual = x + residual (x alone
    when residual is None), in x's dtype; out = weight * normalised, where
    normalised is new_residual divided by the root mean square of its row plus
    eps under the root, computed in fp32 and rounded to x's dtype before the
    weight multiplies it. An input whose last axis is not contiguous: compute it
    right, or raise ValueError.
    """
    if x.stride(-1) != 1 or (residual is not None and residual.stride(-1) != 1):
        raise ValueError("x and residual need a contiguous last axis")
    rows, hidden = x.shape
    out = torch.empty(rows, hidden, dtype=torch.promote_types(weight.dtype, x.dtype),
                      device=x.device)
    new_residual = x if residual is None else torch.empty(rows, hidden, dtype=x.dtype,
                                                          device=x.device)
    if rows:
        _add_rms_norm_kernel[(rows,)](
            x, x if residual is None else residual, weight, out, new_residual, hidden, eps,
            HAS_RESIDUAL=residual is not None, BLOCK=triton.next_power_of_2(hidden))
    return out, new_residual
