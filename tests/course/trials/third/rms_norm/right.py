"""Right: computes any layout (every stride passed, the last axis too, instead of refusing it), treats a
missing residual with a constexpr branch rather than a second pointer, and takes out's dtype from weight x x as torch would.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _residual_rms_norm(X, R, W, OUT, NEW_R,
                       sx_row, sx_col, sr_row, sr_col, sw, so_row, sn_row,
                       hidden, eps,
                       HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    inside = cols < hidden
    total = tl.load(X + row * sx_row + cols * sx_col, mask=inside, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        total += tl.load(R + row * sr_row + cols * sr_col, mask=inside, other=0.0).to(tl.float32)
    # the residual stream as the plain model keeps it: rounded to x's dtype
    stream = total.to(NEW_R.dtype.element_ty)
    tl.store(NEW_R + row * sn_row + cols, stream, mask=inside)
    values = stream.to(tl.float32)
    mean_square = tl.sum(values * values, axis=0) / hidden
    normalised = (values * tl.math.rsqrt(mean_square + eps)).to(NEW_R.dtype.element_ty)
    weight = tl.load(W + cols * sw, mask=inside, other=0.0).to(tl.float32)
    tl.store(OUT + row * so_row + cols,
             (weight * normalised.to(tl.float32)).to(OUT.dtype.element_ty), mask=inside)


def add_rms_norm(x, residual, weight, eps):
    """(weight * RMSNorm(x + residual), x + residual) for x, residual [rows, hidden]."""
    if x.dim() != 2:
        raise ValueError(f"x must be [rows, hidden], got shape {tuple(x.shape)}")
    rows, hidden = x.shape
    if weight.shape != (hidden,):
        raise ValueError(f"weight must be [{hidden}], got {tuple(weight.shape)}")
    if residual is not None and residual.shape != x.shape:
        raise ValueError(f"residual {tuple(residual.shape)} does not match x {tuple(x.shape)}")
    new_residual = torch.empty((rows, hidden), dtype=x.dtype, device=x.device)
    out = torch.empty((rows, hidden), dtype=torch.promote_types(weight.dtype, x.dtype),
                      device=x.device)
    if rows == 0 or hidden == 0:
        return out, (x if residual is None else new_residual)
    block = triton.next_power_of_2(hidden)
    # about 16 values of each input per thread, 1 to 16 warps
    warps = min(16, max(1, block // (32 * 16)))
    other = residual if residual is not None else x
    _residual_rms_norm[(rows,)](
        x, other, weight, out, new_residual,
        x.stride(0), x.stride(1), other.stride(0), other.stride(1), weight.stride(0),
        out.stride(0), new_residual.stride(0), hidden, float(eps),
        HAS_RESIDUAL=residual is not None, BLOCK=block, num_warps=warps)
    # the first layer's residual is x itself, as in the plain model
    return out, (x if residual is None else new_residual)
