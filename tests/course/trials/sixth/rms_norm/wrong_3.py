"""Misconception: one thread per element, so num_warps = BLOCK // 32. The interpreter
ignores it and Triton even compiles it, but hidden 2048 asks for 64 warps (2048 threads
a block), which no GPU launches: the limit is 1024 threads, 32 warps."""
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
    if x.stride(-1) != 1 or (residual is not None and residual.stride(-1) != 1) or weight.stride(-1) != 1:
        raise ValueError("x, residual and weight need a contiguous last axis")
    rows, hidden = x.shape
    out = torch.empty_like(x)
    new_residual = torch.empty_like(x)
    if rows == 0:
        return out, new_residual
    BLOCK = triton.next_power_of_2(hidden)
    _add_rms_norm_kernel[(rows,)](
        x, x if residual is None else residual, weight, out, new_residual, hidden, eps,
        x.stride(0), x.stride(0) if residual is None else residual.stride(0), out.stride(0), HAS_RESIDUAL=residual is not None, BLOCK=BLOCK,
        num_warps=max(1, BLOCK // 32))
    return out, new_residual
