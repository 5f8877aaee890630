"""Misconception: the softmax over the splits needs no max subtracted, w = exp(lse) / sum(exp(lse)),
since log-sum-exps are "small". Fine for lse within fp32's exp range; an lse above 88.7 overflows to
inf (inf/inf = nan) and ranges all below -103 underflow to 0, so the row comes out 0 or nan."""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(PARTS, LSE, OUT, num_splits, num_heads, head_dim,
                    stride_ps, stride_pn, stride_ph, stride_ls, stride_ln, stride_on, stride_oh,
                    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    n = row // num_heads
    h = row % num_heads
    s = tl.arange(0, BLOCK_S)
    d = tl.arange(0, BLOCK_D)
    s_ok = s < num_splits
    d_ok = d < head_dim
    lse = tl.load(LSE + s * stride_ls + n * stride_ln + h, mask=s_ok, other=float("-inf"))
    w = tl.exp(lse)                                          # -inf: weight 0
    total = tl.sum(w, axis=0)
    parts = tl.load(PARTS + s[:, None] * stride_ps + n * stride_pn + h * stride_ph + d[None, :],
                    mask=s_ok[:, None] & d_ok[None, :], other=0.0)
    parts = tl.where(w[:, None] > 0, parts, 0.0)             # an empty range's parts may be anything
    acc = tl.sum(w[:, None] * parts, axis=0)
    out = tl.where(total > 0, acc / tl.where(total > 0, total, 1.0), 0.0)
    tl.store(OUT + n * stride_on + h * stride_oh + d, out, mask=d_ok)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d] (fp32): each range's softmax-weighted V over its
    own keys; lse [splits, N, H] (fp32): the log of each range's softmax
    denominator, -inf where the range held no key (its parts there may hold
    anything: only its weight of 0 makes them count for nothing). Return [N, H, d] in
    ``dtype``: the attention over every range's keys together; a row that no
    range saw becomes 0. Raise ValueError if lse's shape does not match parts'.
    An input whose last axis is not contiguous: compute it right, or raise ValueError.
    """
    if lse.shape != parts.shape[:3]:
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    if parts.stride(-1) != 1:
        raise ValueError("parts' last axis must be contiguous")
    num_splits, tokens, heads, head_dim = parts.shape
    lse = lse.contiguous()
    out = torch.empty((tokens, heads, head_dim), dtype=dtype, device=parts.device)
    if out.numel() == 0:
        return out
    _combine_kernel[(tokens * heads,)](
        parts, lse, out, num_splits, heads, head_dim,
        parts.stride(0), parts.stride(1), parts.stride(2), lse.stride(0), lse.stride(1),
        out.stride(0), out.stride(1),
        BLOCK_S=triton.next_power_of_2(num_splits), BLOCK_D=triton.next_power_of_2(head_dim))
    return out
