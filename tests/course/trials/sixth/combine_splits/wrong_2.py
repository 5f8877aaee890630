"""Misconception: split-KV makes parts and lse itself, so they are packed: offsets are
computed from the shape ([S, N, H, d] row-major) and no stride is read or checked. A
slice such as parts = big[..., :d] or lse = big[..., :H] is read from the wrong places.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(PARTS, LSE, OUT, S, H, D, sp_s, sp_n, sp_h, sl_s, sl_n, sl_h,
                    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    n, h = tl.program_id(0), tl.program_id(1)
    s = tl.arange(0, BLOCK_S)
    d = tl.arange(0, BLOCK_D)
    lse = tl.load(LSE + s * sl_s + n * sl_n + h * sl_h, mask=s < S, other=float("-inf"))
    best = tl.max(lse, axis=0)
    w = tl.where(lse == float("-inf"), 0.0, tl.exp(lse - best))
    total = tl.sum(w, axis=0)
    parts = tl.load(PARTS + s[:, None] * sp_s + n * sp_n + h * sp_h + d[None, :],
                    mask=(s[:, None] < S) & (d[None, :] < D), other=0.0)
    out = tl.sum(w[:, None] * parts, axis=0) / tl.where(total > 0, total, 1.0)
    tl.store(OUT + (n * H + h) * D + d, out.to(OUT.dtype.element_ty), mask=d < D)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d] (fp32): each range's softmax-weighted V over its
    own keys; lse [splits, N, H] (fp32): the log of each range's softmax
    denominator, -inf where the range held no key (its parts there may hold any
    finite values: its weight of 0 makes them count for nothing). Return [N, H, d] in
    ``dtype``: the attention over every range's keys together; a row that no
    range saw becomes 0. Raise ValueError if lse's shape does not match parts'.
    An input whose last axis is not contiguous: compute it right, or raise ValueError.
    """
    if lse.shape != parts.shape[:3]:
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    S, N, H, D = parts.shape
    out = torch.empty((N, H, D), dtype=dtype, device=parts.device)
    if N * H == 0:
        return out
    _combine_kernel[(N, H)](parts, lse, out, S, H, D, N * H * D, H * D, D, N * H, H, 1,
                            BLOCK_S=triton.next_power_of_2(S), BLOCK_D=triton.next_power_of_2(D))
    return out
