"""Misconception: masked loads can pad with other=0.0 as usual; but a padded split's lse
of 0 is a real weight exp(0 - max), not "no keys". Right when splits is a power of two
(no padding); with 3 splits the 4th, padded, one dilutes the result (and may set the max)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(PARTS, LSE, OUT, splits, heads, head_dim,
                    sp0, sp1, sp2, sl0, sl1, sl2, so0, so1,
                    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    n, h = tl.program_id(0), tl.program_id(1)
    s = tl.arange(0, BLOCK_S)
    d = tl.arange(0, BLOCK_D)
    s_ok, d_ok = s < splits, d < head_dim
    lse = tl.load(LSE + s * sl0 + n * sl1 + h * sl2, mask=s_ok, other=0.0)
    top = tl.max(lse, axis=0)
    top = tl.where(top == float("-inf"), 0.0, top)
    w = tl.exp(lse - top)
    total = tl.sum(w, axis=0)
    parts = tl.load(PARTS + s[:, None] * sp0 + n * sp1 + h * sp2 + d[None, :],
                    mask=s_ok[:, None] & d_ok[None, :], other=0.0)
    acc = tl.sum(parts * w[:, None], axis=0)
    out = tl.where(total > 0.0, acc / tl.where(total > 0.0, total, 1.0), 0.0)
    tl.store(OUT + n * so0 + h * so1 + d, out.to(OUT.dtype.element_ty), mask=d_ok)


def combine_splits(parts, lse, dtype):
    """Merge split-KV's partial results (see the stub's contract)."""
    if parts.dim() != 4 or tuple(lse.shape) != tuple(parts.shape[:3]):
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    if parts.stride(-1) != 1:
        raise ValueError("parts' last axis must be contiguous")
    splits, tokens, heads, head_dim = parts.shape
    out = torch.empty((tokens, heads, head_dim), dtype=dtype, device=parts.device)
    if tokens * heads == 0:
        return out
    _combine_kernel[(tokens, heads)](
        parts, lse, out, splits, heads, head_dim,
        parts.stride(0), parts.stride(1), parts.stride(2),
        lse.stride(0), lse.stride(1), lse.stride(2), out.stride(0), out.stride(1),
        BLOCK_S=triton.next_power_of_2(splits), BLOCK_D=triton.next_power_of_2(head_dim))
    return out
