"""Right: a program normalises a tile of several rows at once (a 2-D block, rows x hidden)
rather than one row each, and reads every stride, the last axis's included, so any layout
is computed right without a copy; out takes torch's promotion of weight and x.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_rms_norm_rows(X, RES_IN, W, OUT, RES_OUT, rows, hidden, eps,
                       sx_r, sx_c, sr_r, sr_c, sw, so_r, sn_r,
                       HAS_RESIDUAL: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, BLOCK)
    inside = (r[:, None] < rows) & (c[None, :] < hidden)
    total = tl.load(X + r[:, None] * sx_r + c[None, :] * sx_c, mask=inside, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        total += tl.load(RES_IN + r[:, None] * sr_r + c[None, :] * sr_c, mask=inside, other=0.0).to(tl.float32)
    # The residual stream is x's dtype: round the sum there, and normalise the rounded value.
    stream = total.to(RES_OUT.dtype.element_ty)
    tl.store(RES_OUT + r[:, None] * sn_r + c[None, :], stream, mask=inside)
    s = stream.to(tl.float32)
    inv = tl.rsqrt(tl.sum(s * s, axis=1) / hidden + eps)
    normed = (s * inv[:, None]).to(RES_OUT.dtype.element_ty).to(tl.float32)   # rounded, then scaled
    w = tl.load(W + c * sw, mask=c < hidden, other=0.0).to(tl.float32)
    tl.store(OUT + r[:, None] * so_r + c[None, :], (w[None, :] * normed).to(OUT.dtype.element_ty), mask=inside)


def add_rms_norm(x, residual, weight, eps):
    """x, residual [rows, hidden] (residual may be None: the first layer), weight
    [hidden]. Return (out, new_residual): new_residual = x + residual (x alone
    when residual is None), in x's dtype; out = weight * normalised, where
    normalised is new_residual divided by the root mean square of its row plus
    eps under the root, computed in fp32 and rounded to x's dtype before the
    weight multiplies it. An input whose last axis is not contiguous: compute it
    right, or raise ValueError.
    """
    if x.dim() != 2 or (residual is not None and residual.shape != x.shape) or weight.shape != x.shape[-1:]:
        raise ValueError(f"expected x, residual [rows, hidden] and weight [hidden], got "
                         f"{tuple(x.shape)}, {None if residual is None else tuple(residual.shape)}, "
                         f"{tuple(weight.shape)}")
    rows, hidden = x.shape
    new_residual = torch.empty((rows, hidden), dtype=x.dtype, device=x.device)
    out = torch.empty((rows, hidden), dtype=torch.promote_types(weight.dtype, x.dtype), device=x.device)
    if rows == 0 or hidden == 0:
        return out, new_residual
    block = triton.next_power_of_2(hidden)
    tile_rows = max(1, min(16, 2048 // block))        # about 2K elements a program at least
    res = x if residual is None else residual         # not read when there is none
    _add_rms_norm_rows[(triton.cdiv(rows, tile_rows),)](
        x, res, weight, out, new_residual, rows, hidden, eps,
        x.stride(0), x.stride(1), res.stride(0), res.stride(1), weight.stride(0),
        out.stride(0), new_residual.stride(0),
        HAS_RESIDUAL=residual is not None, ROWS=tile_rows, BLOCK=block,
        num_warps=min(16, max(4, tile_rows * block // 512)))
    return out, new_residual
