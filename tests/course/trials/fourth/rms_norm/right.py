"""Right, written differently: each program owns a [ROWS, BLOCK] tile of several rows (rows per
program chosen so a tile stays near 4K values), every tensor is addressed through both of its
strides (a strided last axis is computed, not refused), and the output takes torch's promoted dtype."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_rms_norm_rows(X, R, W, OUT, NEW_R, n_rows, hidden, eps,
                       sx0, sx1, sr0, sr1, sw, so0, so1, sn0, sn1,
                       HAS_RESIDUAL: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]       # [ROWS, 1]
    cols = tl.arange(0, BLOCK)[None, :]                                # [1, BLOCK]
    row_ok = rows < n_rows
    mask = row_ok & (cols < hidden)
    x = tl.load(X + rows * sx0 + cols * sx1, mask=mask, other=0.0)
    if HAS_RESIDUAL:
        r = tl.load(R + rows * sr0 + cols * sr1, mask=mask, other=0.0)
        # the sum, rounded to x's dtype: the stream the next layer reads
        total = (x.to(tl.float32) + r.to(tl.float32)).to(x.dtype)
    else:
        total = x
    tl.store(NEW_R + rows * sn0 + cols * sn1, total, mask=mask)
    t32 = total.to(tl.float32)
    mean_square = tl.sum(t32 * t32, axis=1) / hidden                   # padding adds 0
    inv = 1.0 / tl.sqrt(mean_square + eps)
    normed = (t32 * inv[:, None]).to(x.dtype)                          # rounded before the weight
    w = tl.load(W + cols * sw, mask=cols < hidden, other=0.0)
    # the product of two 16-bit values is exact in fp32: rounding it once on the store is
    # what a 16-bit multiply gives
    tl.store(OUT + rows * so0 + cols * so1, w.to(tl.float32) * normed.to(tl.float32), mask=mask)


def add_rms_norm(x, residual, weight, eps):
    """x, residual [rows, hidden] (residual may be None: the first layer), weight
    [hidden]. Return (out, new_residual): new_residual = x + residual (x alone
    when residual is None), in x's dtype; out = weight * normalised, where
    normalised is new_residual divided by the root mean square of its row plus
    eps under the root, computed in fp32 and rounded to x's dtype before the
    weight multiplies it. An input whose last axis is not contiguous: compute it
    right, or raise ValueError.
    """
    if x.dim() != 2 or weight.dim() != 1 or weight.shape[0] != x.shape[1]:
        raise ValueError(f"x [rows, hidden] and weight [hidden] expected, got {tuple(x.shape)} "
                         f"and {tuple(weight.shape)}")
    if residual is not None and residual.shape != x.shape:
        raise ValueError(f"residual {tuple(residual.shape)} does not match x {tuple(x.shape)}")
    n_rows, hidden = x.shape
    new_residual = torch.empty_like(x, memory_format=torch.contiguous_format)
    out = torch.empty(x.shape, dtype=torch.promote_types(weight.dtype, x.dtype), device=x.device)
    if n_rows == 0 or hidden == 0:
        if residual is not None:
            new_residual.copy_(x + residual)
        else:
            new_residual.copy_(x)
        return out, new_residual
    block = triton.next_power_of_2(hidden)
    rows_per_program = max(1, min(16, 4096 // block))
    tile = rows_per_program * block
    r = residual if residual is not None else x            # never read without HAS_RESIDUAL
    grid = (triton.cdiv(n_rows, rows_per_program),)
    _add_rms_norm_rows[grid](
        x, r, weight, out, new_residual, n_rows, hidden, eps,
        x.stride(0), x.stride(1), r.stride(0), r.stride(1), weight.stride(0),
        out.stride(0), out.stride(1), new_residual.stride(0), new_residual.stride(1),
        HAS_RESIDUAL=residual is not None, ROWS=rows_per_program, BLOCK=block,
        num_warps=4 if tile <= 2048 else 8 if tile <= 8192 else 16)
    return out, new_residual
