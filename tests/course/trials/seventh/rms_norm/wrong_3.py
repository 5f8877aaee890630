"""Misconception: "a [rows, hidden] activation is contiguous, so row r starts
at r * hidden": the wrapper refuses a non-contiguous last axis (as the
contract allows) but then addresses every tensor with row * hidden instead
of its row stride. A tensor whose rows are spaced wider than hidden, though
its last axis is contiguous, is read from the wrong places: a slice of the
fused qkv or gate/up output, x[:, :hidden] of a wider buffer, a padded batch.
Its outputs are fresh and contiguous, so only inputs with a row stride other
than hidden go wrong.

Concrete input: x = torch.randn(4, 96)[:, :64] (row stride 96), residual
torch.randn(4, 64), weight ones: row 1 of the result is computed from
elements 64..127 of the buffer (the end of row 0 and the start of row 1)
instead of 96..159.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _kernel(X, RES, W, OUT, NEWR, hidden, eps,
            HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < hidden
    base = row * hidden
    x = tl.load(X + base + cols, mask=inside, other=0.0).to(tl.float32)
    if HAS_RESIDUAL:
        x += tl.load(RES + base + cols, mask=inside, other=0.0).to(tl.float32)
    x = x.to(NEWR.dtype.element_ty)
    tl.store(NEWR + base + cols, x, mask=inside)
    x = x.to(tl.float32)
    scale = tl.rsqrt(tl.sum(x * x, axis=0) / hidden + eps)
    w = tl.load(W + cols, mask=inside, other=0.0)
    tl.store(OUT + base + cols, (x * scale).to(OUT.dtype.element_ty) * w, mask=inside)


def add_rms_norm(x, residual, weight, eps):
    if x.stride(-1) != 1 or (residual is not None and residual.stride(-1) != 1):
        raise ValueError("the last axis of x and residual must be contiguous")
    rows, hidden = x.shape
    out = torch.empty((rows, hidden), dtype=x.dtype, device=x.device)
    new_residual = torch.empty((rows, hidden), dtype=x.dtype, device=x.device)
    res = x if residual is None else residual
    _kernel[(rows,)](x, res, weight, out, new_residual, hidden, eps,
                     HAS_RESIDUAL=residual is not None,
                     BLOCK=triton.next_power_of_2(hidden))
    return out, new_residual
