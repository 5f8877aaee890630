"""Misconception: "softmax over the splits is exp(lse - max) / sum, the
max-subtraction makes it safe": true while some range saw a key, but for a
row that no range saw every lse is -inf, the maximum is -inf, lse - max is
-inf - (-inf) = nan, and the row comes out nan instead of the 0 the contract
asks for. A split decode step never produces such a row (split 0 always sees
the first key), so the engine's runs pass.

Concrete input: parts = ones(2, 1, 1, 16), lse = full((2, 1, 1), -inf):
this returns nan everywhere; the contract says zeros.
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
    weight = tl.exp(lse - tl.max(lse, 0))
    weight = weight / tl.sum(weight, 0)
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
