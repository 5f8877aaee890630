"""Misconception: parts and lse are fresh contiguous buffers, so offsets follow from the shape
((s*N + n)*H + h)*d; checking the last axis is enough. A view such as parts[:, :, ::2] (heads strided) reads the wrong rows.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(PARTS, LSE, OUT, num_splits, num_tokens, num_heads, head_dim,
                    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    n, h = tl.program_id(0), tl.program_id(1)
    s = tl.arange(0, BLOCK_S)
    dims = tl.arange(0, BLOCK_D)
    row = (s * num_tokens + n) * num_heads + h          # [splits, N, H] laid out in order
    lse = tl.load(LSE + row, mask=s < num_splits, other=float("-inf"))
    top = tl.max(lse, axis=0)
    w = tl.where(lse == float("-inf"), 0.0, tl.exp(lse - top))
    total = tl.sum(w, axis=0)
    parts = tl.load(PARTS + row[:, None] * head_dim + dims[None, :],
                    mask=(s[:, None] < num_splits) & (dims[None, :] < head_dim), other=0.0)
    acc = tl.sum(w[:, None] * parts, axis=0)
    out = tl.where(total > 0, acc / total, 0.0)
    tl.store(OUT + (n * num_heads + h) * head_dim + dims, out.to(OUT.dtype.element_ty), mask=dims < head_dim)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d], lse [splits, N, H] -> [N, H, d] in dtype."""
    if lse.shape != parts.shape[:-1]:
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    if parts.stride(-1) != 1:
        raise ValueError("combine_splits needs parts with a contiguous last axis")
    splits, n, h, d = parts.shape
    out = torch.empty((n, h, d), dtype=dtype, device=parts.device)
    _combine_kernel[(n, h)](parts, lse, out, splits, n, h, d,
                            BLOCK_S=max(2, triton.next_power_of_2(splits)),
                            BLOCK_D=triton.next_power_of_2(d))
    return out
