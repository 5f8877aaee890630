"""Misconception: activations are packed, so row r of x starts at r x hidden; no stride is
read or checked. Right for contiguous tensors; a row-strided view such as
big[:, :hidden] (x a slice of the fused qkv output) is read from the wrong places."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_rms_norm_kernel(X, R, W, OUT, RES, hidden, eps, stride_x, stride_r, stride_o,
                         HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < hidden
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0)
    if HAS_RESIDUAL:
        x = (x.to(tl.float32) + tl.load(R + row * stride_r + cols, mask=mask, other=0.0).to(tl.float32)).to(X.dtype.element_ty)
    tl.store(RES + row * stride_o + cols, x, mask=mask)
    x32 = x.to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x32 * x32, axis=0) / hidden + eps)
    w = tl.load(W + cols, mask=mask, other=0.0)
    normed = (x32 * rstd).to(X.dtype.element_ty)            # rounded to x's dtype, then scaled
    tl.store(OUT + row * stride_o + cols, w * normed, mask=mask)


def add_rms_norm(x, residual, weight, eps):
    """x, residual [rows, hidden] (residual may be None: the first layer), weight
    [hidden]. Return (out, new_residual): new_residual = x + residual (x alone
    when residual is None), in x's dtype; out = weight * normalised, where
    normalised is new_residual divided by the root mean square of its row plus
    eps under the root, computed in fp32 and rounded to x's dtype before the
    weight multiplies it. An input whose last axis is not contiguous: compute it
    right, or raise ValueError.
    """
    rows, hidden = x.shape
    out = torch.empty_like(x)
    new_residual = torch.empty_like(x)
    if rows == 0:
        return out, new_residual
    BLOCK = triton.next_power_of_2(hidden)
    _add_rms_norm_kernel[(rows,)](
        x, x if residual is None else residual, weight, out, new_residual, hidden, eps,
        hidden, hidden, out.stride(0), HAS_RESIDUAL=residual is not None, BLOCK=BLOCK,
        num_warps=4 if BLOCK <= 2048 else 8)
    return out, new_residual
