"""Misconception: "parts and lse come straight from torch.empty, so they are
contiguous and their strides follow from the shape": the wrapper checks only
that the last axes are contiguous (as the contract asks) and then computes
every other offset from the shape (split * N*H*d + token * H*d + head * d).
Any other layout whose last axis is contiguous is read at the wrong places:
a view that keeps some heads, a transposed token/head pair, a slice of a
larger split buffer. The math itself (max-shifted weights, empty rows 0) is
right.

Concrete input: parts = torch.randn(2, 3, 8, 16)[:, :, ::2] (heads 0, 2, 4, 6
of a wider buffer: shape [2, 3, 4, 16], strides (384, 128, 32, 1)),
lse = torch.randn(2, 3, 4): this version reads the head rows at offsets
16 * h instead of 32 * h and returns other heads' values.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(P, L, O, num_splits, num_tokens, num_heads,
                    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_S: tl.constexpr):
    token, head = tl.program_id(0), tl.program_id(1)
    s, d = tl.arange(0, BLOCK_S), tl.arange(0, BLOCK_D)
    row = token * num_heads + head
    lse = tl.load(L + s * (num_tokens * num_heads) + row, mask=s < num_splits,
                  other=float("-inf"))
    top = tl.max(lse, 0)
    weight = tl.exp(lse - tl.where(top == float("-inf"), 0.0, top))
    total = tl.sum(weight, 0)
    weight = weight / tl.where(total == 0.0, 1.0, total)
    ok = (s[:, None] < num_splits) & (d[None, :] < HEAD_DIM)
    parts = tl.load(P + s[:, None] * (num_tokens * num_heads * HEAD_DIM) + row * HEAD_DIM
                    + d[None, :], mask=ok, other=0.0)
    out = tl.sum(weight[:, None] * parts, 0)
    tl.store(O + row * HEAD_DIM + d, out.to(O.dtype.element_ty), mask=d < HEAD_DIM)


def combine_splits(parts, lse, dtype):
    if lse.shape != parts.shape[:3]:
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    if parts.stride(-1) != 1 or lse.stride(-1) != 1:
        raise ValueError("the last axis of parts and lse must be contiguous")
    splits, tokens, heads, head_dim = parts.shape
    out = torch.empty((tokens, heads, head_dim), dtype=dtype, device=parts.device)
    _combine_kernel[(tokens, heads)](
        parts, lse, out, splits, tokens, heads,
        HEAD_DIM=head_dim, BLOCK_D=triton.next_power_of_2(head_dim),
        BLOCK_S=triton.next_power_of_2(splits))
    return out
