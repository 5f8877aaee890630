"""Misconception: keep full precision to the end: the weight multiplies the fp32
normalised row and the product is rounded once, instead of rounding the normalised row
to x's dtype first. Identical in fp32; in fp16/bf16 many outputs differ by a rounding step."""
import torch
import triton
import triton.language as tl


@triton.jit
def _kernel(X, RES, W, OUT, NEW_RES, hidden, eps, sx, sr, so, sn,
            HAS_RES: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < hidden
    total = tl.load(X + row * sx + cols, mask=inside, other=0.0).to(tl.float32)
    if HAS_RES:
        total += tl.load(RES + row * sr + cols, mask=inside, other=0.0).to(tl.float32)
    summed = total.to(NEW_RES.dtype.element_ty)
    tl.store(NEW_RES + row * sn + cols, summed, mask=inside)
    v = summed.to(tl.float32)
    rms = tl.rsqrt(tl.sum(v * v, axis=0) / hidden + eps)
    w = tl.load(W + cols, mask=inside, other=0.0).to(tl.float32)
    # everything in fp32, one rounding at the end
    tl.store(OUT + row * so + cols, (w * (v * rms)).to(OUT.dtype.element_ty), mask=inside)


def add_rms_norm(x, residual, weight, eps):
    """(out, new_residual): see the stub's contract."""
    if x.stride(-1) != 1 or (residual is not None and residual.stride(-1) != 1) or weight.stride(-1) != 1:
        raise ValueError("the last axis must be contiguous")
    rows, hidden = x.shape
    new_residual = torch.empty_like(x, memory_format=torch.contiguous_format)
    out = torch.empty((rows, hidden), dtype=torch.result_type(weight, x), device=x.device)
    if rows == 0:
        return out, new_residual
    res = x if residual is None else residual
    block = triton.next_power_of_2(hidden)
    _kernel[(rows,)](x, res, weight, out, new_residual, hidden, eps,
                     x.stride(0), res.stride(0), out.stride(0), new_residual.stride(0),
                     HAS_RES=residual is not None, BLOCK=block,
                     num_warps=min(16, max(1, block // 256)))
    return out, new_residual
