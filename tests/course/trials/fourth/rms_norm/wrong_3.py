"""Misconception: one thread per element is fastest, so num_warps = BLOCK // 32. The interpreter
ignores num_warps and every value is right, and ptxas even compiles it, but hidden 2048 asks for 64
warps (2048 threads) and 4096 for 128: over the 1024 threads per block a real GPU will launch."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_rms_norm_kernel(X, R, W, OUT, NEW_R, hidden, eps,
                         stride_x, stride_r, stride_o, stride_n,
                         HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < hidden
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0)
    if HAS_RESIDUAL:
        r = tl.load(R + row * stride_r + cols, mask=mask, other=0.0)
        x = (x.to(tl.float32) + r.to(tl.float32)).to(X.dtype.element_ty)
    tl.store(NEW_R + row * stride_n + cols, x, mask=mask)
    x32 = x.to(tl.float32)
    mean_square = tl.sum(x32 * x32, axis=0) / hidden
    inv = 1.0 / tl.sqrt(mean_square + eps)
    w = tl.load(W + cols, mask=mask, other=0.0)
    out = w.to(tl.float32) * (x32 * inv).to(X.dtype.element_ty).to(tl.float32)
    tl.store(OUT + row * stride_o + cols, out, mask=mask)


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
        raise ValueError("add_rms_norm needs a contiguous last axis")
    rows, hidden = x.shape
    new_residual = torch.empty_like(x)
    out = torch.empty(x.shape, dtype=torch.promote_types(weight.dtype, x.dtype), device=x.device)
    if rows == 0:
        new_residual.copy_(x if residual is None else x + residual)
        return out, new_residual
    block = triton.next_power_of_2(hidden)
    r = x if residual is None else residual
    _add_rms_norm_kernel[(rows,)](
        x, r, weight, out, new_residual, hidden, eps,
        x.stride(0), r.stride(0), out.stride(0), new_residual.stride(0),
        HAS_RESIDUAL=residual is not None, BLOCK=block, num_warps=max(1, block // 32))
    return out, new_residual
