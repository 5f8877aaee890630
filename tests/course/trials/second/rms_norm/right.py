"""Right, tiled and stride-general instead of one power-of-two block per row: the kernel walks each row in
fixed column tiles (first pass: add, round, store the residual, sum squares; second: scale), takes both
strides of every tensor so a non-contiguous last axis is computed, not refused, and flattens leading axes.
"""
import torch
import triton
import triton.language as tl

TILE = 1024          # columns per trip: any hidden size, in a fixed shape a GPU accepts


@triton.jit
def _add_rms_norm_tiled(X, R, W, OUT, NEW, hidden, eps,
                        sx0, sx1, sr0, sr1, sw, so0, so1, sn0, sn1,
                        HAS_R: tl.constexpr, TILE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    squares = tl.zeros([TILE], dtype=tl.float32)
    for start in range(0, hidden, TILE):
        cols = start + tl.arange(0, TILE)
        inside = cols < hidden
        total = tl.load(X + row * sx0 + cols * sx1, mask=inside, other=0.0).to(tl.float32)
        if HAS_R:
            total += tl.load(R + row * sr0 + cols * sr1, mask=inside, other=0.0).to(tl.float32)
        rounded = total.to(NEW.dtype.element_ty)             # the residual stream, in x's dtype
        tl.store(NEW + row * sn0 + cols * sn1, rounded, mask=inside)
        back = rounded.to(tl.float32)
        squares += back * back
    inv_rms = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / hidden + eps)
    for start in range(0, hidden, TILE):
        cols = start + tl.arange(0, TILE)
        inside = cols < hidden
        # the sum again, from the inputs (not from NEW, which another thread may have stored)
        total = tl.load(X + row * sx0 + cols * sx1, mask=inside, other=0.0).to(tl.float32)
        if HAS_R:
            total += tl.load(R + row * sr0 + cols * sr1, mask=inside, other=0.0).to(tl.float32)
        back = total.to(NEW.dtype.element_ty).to(tl.float32)
        normed = (back * inv_rms).to(NEW.dtype.element_ty).to(tl.float32)   # rounded, then scaled
        weight = tl.load(W + cols * sw, mask=inside, other=0.0).to(tl.float32)
        tl.store(OUT + row * so0 + cols * so1, (weight * normed).to(OUT.dtype.element_ty),
                 mask=inside)


def add_rms_norm(x, residual, weight, eps):
    """x, residual [rows, hidden] (residual may be None), weight [hidden].
    Return (out, new_residual): new_residual = x + residual in x's dtype;
    out = weight * (new_residual / rms, computed in fp32, rounded to x's dtype)."""
    hidden = x.shape[-1]
    if weight.shape != (hidden,) or (residual is not None and residual.shape != x.shape):
        raise ValueError(f"shapes: x {tuple(x.shape)}, residual "
                         f"{None if residual is None else tuple(residual.shape)}, "
                         f"weight {tuple(weight.shape)}")
    lead = x.shape[:-1]
    x2 = x.reshape(-1, hidden)
    r2 = x2 if residual is None else residual.reshape(-1, hidden)
    rows = x2.shape[0]
    new = torch.empty(rows, hidden, dtype=x.dtype, device=x.device)
    out = torch.empty(rows, hidden, dtype=torch.promote_types(weight.dtype, x.dtype),
                      device=x.device)
    if rows and hidden:
        _add_rms_norm_tiled[(rows,)](
            x2, r2, weight, out, new, hidden, float(eps),
            x2.stride(0), x2.stride(1), r2.stride(0), r2.stride(1), weight.stride(0),
            out.stride(0), out.stride(1), new.stride(0), new.stride(1),
            HAS_R=residual is not None, TILE=min(TILE, triton.next_power_of_2(hidden)),
            num_warps=4)
    elif rows:                 # hidden 0: nothing to normalise
        pass
    return out.reshape(*lead, hidden), new.reshape(*lead, hidden)
