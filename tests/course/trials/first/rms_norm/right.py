"""Correct, written differently: each program owns a 2-D tile of ROWS rows (not one row),
and every tensor is addressed through both of its strides, so strided rows and even a
non-contiguous last axis are computed right instead of refused."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_rms_norm_tile(X, R, W, OUT, NEW_R,
                       sx_r, sx_c, sr_r, sr_c, sw, so_r, so_c, sn_r, sn_c,
                       rows, hidden, eps,
                       HAS_RESIDUAL: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]          # [ROWS, 1]
    c = tl.arange(0, BLOCK)[None, :]                                   # [1, BLOCK]
    inside = (r < rows) & (c < hidden)
    dtype = X.dtype.element_ty
    total = tl.load(X + r * sx_r + c * sx_c, mask=inside, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        total += tl.load(R + r * sr_r + c * sr_c, mask=inside, other=0.0).to(tl.float32)
        total = total.to(dtype)                    # the sum as x's dtype holds it
        tl.store(NEW_R + r * sn_r + c * sn_c, total, mask=inside)
        total = total.to(tl.float32)
    # mean of squares as a sum times 1/hidden (the padded columns are zeros)
    inv_rms = 1.0 / tl.sqrt(tl.sum(total * total, axis=1) / hidden + eps)
    normed = (total * inv_rms[:, None]).to(dtype).to(tl.float32)       # round, then scale
    w = tl.load(W + c * sw, mask=c < hidden, other=0.0).to(tl.float32)
    tl.store(OUT + r * so_r + c * so_c, (w * normed).to(OUT.dtype.element_ty), mask=inside)


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
    out = torch.empty((rows, hidden), dtype=torch.promote_types(weight.dtype, x.dtype),
                      device=x.device)
    if residual is None:
        new_residual, r_strides, n_strides = x, (0, 0), (0, 0)
    else:
        new_residual = torch.empty((rows, hidden), dtype=x.dtype, device=x.device)
        r_strides, n_strides = residual.stride(), new_residual.stride()
    if rows == 0:
        return out, new_residual
    block = triton.next_power_of_2(hidden)
    tile_rows = max(1, min(16, 4096 // block, triton.next_power_of_2(rows)))
    grid = (triton.cdiv(rows, tile_rows),)
    _add_rms_norm_tile[grid](
        x, x if residual is None else residual, weight, out, new_residual,
        *x.stride(), *r_strides, weight.stride(0), *out.stride(), *n_strides,
        rows, hidden, float(eps),
        HAS_RESIDUAL=residual is not None, ROWS=tile_rows, BLOCK=block)
    return out, new_residual
