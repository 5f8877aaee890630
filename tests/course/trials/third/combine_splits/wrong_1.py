"""Misconception: a range's weight is exp(lse) / sum(exp(lse)); subtracting the maximum is only for
speed. Fine for ordinary lse (about log of the keys); lse near 100 overflows fp32 (inf / inf = nan), lse below -104 underflows to a zero row.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(PARTS, LSE, OUT, num_splits, stride_ps, stride_pn, stride_ph,
                    stride_ls, stride_ln, stride_on, stride_oh, head_dim,
                    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    n, h = tl.program_id(0), tl.program_id(1)
    s = tl.arange(0, BLOCK_S)
    dims = tl.arange(0, BLOCK_D)
    lse = tl.load(LSE + s * stride_ls + n * stride_ln + h, mask=s < num_splits, other=float("-inf"))
    w = tl.exp(lse)                                     # exp(-inf) = 0: an empty range weighs nothing
    total = tl.sum(w, axis=0)
    parts = tl.load(PARTS + s[:, None] * stride_ps + n * stride_pn + h * stride_ph + dims[None, :],
                    mask=(s[:, None] < num_splits) & (dims[None, :] < head_dim), other=0.0)
    acc = tl.sum(w[:, None] * parts, axis=0)
    out = tl.where(total > 0, acc / total, 0.0)
    tl.store(OUT + n * stride_on + h * stride_oh + dims, out.to(OUT.dtype.element_ty), mask=dims < head_dim)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d], lse [splits, N, H] -> [N, H, d] in dtype."""
    if lse.shape != parts.shape[:-1]:
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    if parts.stride(-1) != 1 or lse.stride(-1) != 1:
        raise ValueError("combine_splits needs a contiguous last axis")
    splits, n, h, d = parts.shape
    out = torch.empty((n, h, d), dtype=dtype, device=parts.device)
    _combine_kernel[(n, h)](parts, lse, out, splits, parts.stride(0), parts.stride(1), parts.stride(2),
                            lse.stride(0), lse.stride(1), out.stride(0), out.stride(1), d,
                            BLOCK_S=max(2, triton.next_power_of_2(splits)),
                            BLOCK_D=triton.next_power_of_2(d))
    return out
