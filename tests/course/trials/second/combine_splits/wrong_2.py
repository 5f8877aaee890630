"""Misconception: parts and lse come straight from torch.empty in split_kv, so the kernel indexes them as
packed arrays (offsets from the shapes, no strides). Wrong for any strided view, e.g. parts = wide[..., :d]
of a [splits, N, H, 2d] tensor, or lse = lse_t.transpose(0, 1) (never raises, returns garbage).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(PARTS, LSE, OUT, num_splits, N, num_heads,
                    HEAD_DIM: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)                     # = n * H + h, the row in [N, H]
    offs_s = tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    s_ok = offs_s < num_splits
    d_ok = offs_d < HEAD_DIM
    lse = tl.load(LSE + offs_s * (N * num_heads) + row, mask=s_ok, other=float("-inf"))
    m = tl.max(lse, axis=0)
    m = tl.where(m == float("-inf"), 0.0, m)
    w = tl.exp(lse - m)
    total = tl.sum(w, axis=0)
    parts = tl.load(PARTS + (offs_s[:, None] * (N * num_heads) + row) * HEAD_DIM + offs_d[None, :],
                    mask=s_ok[:, None] & d_ok[None, :], other=0.0)
    acc = tl.sum(w[:, None] * parts, axis=0)
    out = tl.where(total > 0, acc / tl.where(total > 0, total, 1.0), 0.0)
    tl.store(OUT + row * HEAD_DIM + offs_d, out.to(OUT.dtype.element_ty), mask=d_ok)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d] (fp32): each range's softmax-weighted V over its
    own keys; lse [splits, N, H] (fp32): the log of each range's softmax
    denominator, -inf where the range held no key. Return [N, H, d] in
    ``dtype``: the attention over every range's keys together; a row that no
    range saw becomes 0. Raise ValueError if lse's shape does not match parts'.
    An input whose last axis is not contiguous: compute it right, or raise ValueError.
    """
    if parts.dim() != 4 or tuple(lse.shape) != tuple(parts.shape[:3]):
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    splits, n, h, d = parts.shape
    out = torch.empty((n, h, d), dtype=dtype, device=parts.device)
    if out.numel() == 0:
        return out
    _combine_kernel[(n * h,)](
        parts, lse, out, splits, n, h,
        HEAD_DIM=d, BLOCK_S=triton.next_power_of_2(max(splits, 1)),
        BLOCK_D=triton.next_power_of_2(d))
    return out
