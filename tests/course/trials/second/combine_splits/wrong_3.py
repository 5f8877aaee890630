"""Misconception: padded split lanes get lse = -inf and so weight 0, so the parts tile needs no split mask
(0 * anything = 0). With a split count that is no power of two (3) it reads past parts' end, and
0 * NaN/inf there is NaN; right whenever splits is a power of two.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(PARTS, LSE, OUT, num_splits, num_heads,
                    sp_s, sp_n, sp_h, sl_s, sl_n, sl_h, so_n, so_h,
                    HEAD_DIM: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    n = row // num_heads
    h = row % num_heads
    offs_s = tl.arange(0, BLOCK_S)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    lse = tl.load(LSE + offs_s * sl_s + n * sl_n + h * sl_h, mask=offs_s < num_splits,
                  other=float("-inf"))
    m = tl.max(lse, axis=0)
    m = tl.where(m == float("-inf"), 0.0, m)
    w = tl.exp(lse - m)                        # 0 for the padded splits
    total = tl.sum(w, axis=0)
    # padded splits weigh 0: only the head dim needs masking
    parts = tl.load(PARTS + offs_s[:, None] * sp_s + n * sp_n + h * sp_h + offs_d[None, :],
                    mask=d_ok[None, :], other=0.0)
    acc = tl.sum(w[:, None] * parts, axis=0)
    out = tl.where(total > 0, acc / tl.where(total > 0, total, 1.0), 0.0)
    tl.store(OUT + n * so_n + h * so_h + offs_d, out.to(OUT.dtype.element_ty), mask=d_ok)


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
    if parts.stride(-1) != 1:
        raise ValueError("the last axis of parts must be contiguous")
    splits, n, h, d = parts.shape
    out = torch.empty((n, h, d), dtype=dtype, device=parts.device)
    if out.numel() == 0:
        return out
    _combine_kernel[(n * h,)](
        parts, lse, out, splits, h,
        parts.stride(0), parts.stride(1), parts.stride(2),
        lse.stride(0), lse.stride(1), lse.stride(2), out.stride(0), out.stride(1),
        HEAD_DIM=d, BLOCK_S=triton.next_power_of_2(max(splits, 1)),
        BLOCK_D=triton.next_power_of_2(d))
    return out
