"""Right: each program normalises a tile of several rows at once (a 2-D [ROWS, BLOCK]
block, the sum of squares reduced along axis 1) instead of one row per program, and it
takes every stride, the column stride too, so any layout is computed rather than refused."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_rms_norm_rows(X, RES, W, OUT, NEW_RES, n_rows, hidden, eps,
                       sx0, sx1, sr0, sr1, sw, so0, so1, sn0, sn1,
                       HAS_RES: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]      # [ROWS, 1]
    cols = tl.arange(0, BLOCK)[None, :]                                # [1, BLOCK]
    inside = (rows < n_rows) & (cols < hidden)
    total = tl.load(X + rows * sx0 + cols * sx1, mask=inside, other=0.0).to(tl.float32)
    if HAS_RES:
        total += tl.load(RES + rows * sr0 + cols * sr1, mask=inside, other=0.0).to(tl.float32)
    # the new residual, rounded to x's dtype, is what gets normalised
    summed = total.to(NEW_RES.dtype.element_ty)
    tl.store(NEW_RES + rows * sn0 + cols * sn1, summed, mask=inside)
    v = summed.to(tl.float32)
    mean_square = tl.sum(v * v, axis=1) / hidden                       # [ROWS]
    normed = v * tl.rsqrt(mean_square + eps)[:, None]
    normed = normed.to(NEW_RES.dtype.element_ty).to(tl.float32)        # rounded before the weight
    w = tl.load(W + cols * sw, mask=cols < hidden, other=0.0).to(tl.float32)
    tl.store(OUT + rows * so0 + cols * so1, (w * normed).to(OUT.dtype.element_ty), mask=inside)


def add_rms_norm(x, residual, weight, eps):
    """x, residual [rows, hidden] (residual may be None: the first layer), weight
    [hidden]. Return (out, new_residual): new_residual = x + residual (x alone
    when residual is None), in x's dtype; out = weight * normalised, where
    normalised is new_residual divided by the root mean square of its row plus
    eps under the root, computed in fp32 and rounded to x's dtype before the
    weight multiplies it. An input whose last axis is not contiguous: compute it
    right, or raise ValueError.
    """
    n_rows, hidden = x.shape
    if residual is not None and residual.shape != x.shape:
        raise ValueError(f"residual {tuple(residual.shape)} does not match x {tuple(x.shape)}")
    if weight.shape != (hidden,):
        raise ValueError(f"weight {tuple(weight.shape)} does not match hidden size {hidden}")
    new_residual = torch.empty((n_rows, hidden), dtype=x.dtype, device=x.device)
    out = torch.empty((n_rows, hidden), dtype=torch.result_type(weight, new_residual),
                      device=x.device)
    if n_rows == 0 or hidden == 0:
        return out, new_residual
    block = triton.next_power_of_2(hidden)
    rows_per_program = max(1, min(16, 4096 // block))
    res = residual if residual is not None else x          # not read when HAS_RES is False
    _add_rms_norm_rows[(triton.cdiv(n_rows, rows_per_program),)](
        x, res, weight, out, new_residual, n_rows, hidden, float(eps),
        x.stride(0), x.stride(1), res.stride(0), res.stride(1), weight.stride(0),
        out.stride(0), out.stride(1), new_residual.stride(0), new_residual.stride(1),
        HAS_RES=residual is not None, ROWS=rows_per_program, BLOCK=block,
        num_warps=min(16, max(1, rows_per_program * block // 256)))
    return out, new_residual
