"""Misconception: "lse is the log of the denominator, so exp(lse) *is* the
denominator: weight each range by exp(lse) and divide by their sum" (no
shift by the largest lse; "the max trick is only for fp16"). In fp32, exp
overflows to inf once an lse exceeds about 88.7, and inf/inf = nan; scores
that large are rare, so ordinary tests pass. Rows no range saw are handled
(their weights are all 0 and the sum is guarded).

Concrete input: lse = [[[100.0]], [[99.0]]] (two splits, one token, one
head), parts ones: the contract gives ones (any convex combination of ones);
this version gives nan, since exp(100) = inf in fp32.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(P, L, O, num_splits,
                    stride_ps, stride_pt, stride_ph, stride_ls, stride_lt,
                    stride_ot, stride_oh,
                    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_S: tl.constexpr):
    token, head = tl.program_id(0), tl.program_id(1)
    s, d = tl.arange(0, BLOCK_S), tl.arange(0, BLOCK_D)
    lse = tl.load(L + s * stride_ls + token * stride_lt + head, mask=s < num_splits,
                  other=float("-inf"))
    weight = tl.exp(lse)                         # the denominators themselves
    total = tl.sum(weight, 0)
    weight = weight / tl.where(total == 0.0, 1.0, total)
    ok = (s[:, None] < num_splits) & (d[None, :] < HEAD_DIM)
    parts = tl.load(P + s[:, None] * stride_ps + token * stride_pt + head * stride_ph
                    + d[None, :], mask=ok, other=0.0)
    out = tl.sum(weight[:, None] * parts, 0)
    tl.store(O + token * stride_ot + head * stride_oh + d, out.to(O.dtype.element_ty),
             mask=d < HEAD_DIM)


def combine_splits(parts, lse, dtype):
    if lse.shape != parts.shape[:3]:
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    if parts.stride(-1) != 1 or lse.stride(-1) != 1:
        raise ValueError("the last axis of parts and lse must be contiguous")
    splits, tokens, heads, head_dim = parts.shape
    out = torch.empty((tokens, heads, head_dim), dtype=dtype, device=parts.device)
    _combine_kernel[(tokens, heads)](
        parts, lse, out, splits,
        parts.stride(0), parts.stride(1), parts.stride(2), lse.stride(0), lse.stride(1),
        out.stride(0), out.stride(1),
        HEAD_DIM=head_dim, BLOCK_D=triton.next_power_of_2(head_dim),
        BLOCK_S=triton.next_power_of_2(splits))
    return out
