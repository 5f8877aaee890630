"""Right: merges the splits in one streaming pass, flash-style (a running max, rescaling
the sums so far), instead of loading every split's lse at once; takes every stride, so
any layout (a non-contiguous last axis too) is computed right without a copy.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _merge_kernel(PARTS, LSE, OUT, splits, heads,
                  sp_s, sp_n, sp_h, sp_d, sl_s, sl_n, sl_h, so_n, so_h, head_dim,
                  BLOCK_D: tl.constexpr):
    row = tl.program_id(0)                      # one (token, head) pair
    n, h = row // heads, row % heads
    cols = tl.arange(0, BLOCK_D)
    inside = cols < head_dim
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    total = tl.zeros([1], dtype=tl.float32)      # the denominator, relative to best
    best = tl.full([1], float("-inf"), dtype=tl.float32)
    for s in range(0, splits):
        lse = tl.load(LSE + s * sl_s + n * sl_n + h * sl_h + tl.zeros([1], dtype=tl.int32)).to(tl.float32)
        new_best = tl.maximum(best, lse)
        empty_so_far = new_best == float("-inf")
        # exp(old - new) rescales what was summed; exp(lse - new) weighs this split.
        rescale = tl.where(empty_so_far, 1.0, tl.exp(best - new_best))
        weight = tl.where(lse == float("-inf"), 0.0, tl.exp(lse - new_best))
        part = tl.load(PARTS + s * sp_s + n * sp_n + h * sp_h + cols * sp_d,
                       mask=inside, other=0.0).to(tl.float32)
        acc = acc * rescale + weight * part
        total = total * rescale + weight
        best = new_best
    out = tl.where(total > 0, acc / tl.where(total > 0, total, 1.0), 0.0)
    tl.store(OUT + n * so_n + h * so_h + cols, out.to(OUT.dtype.element_ty), mask=inside)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d] (fp32): each range's softmax-weighted V over its
    own keys; lse [splits, N, H] (fp32): the log of each range's softmax
    denominator, -inf where the range held no key (its parts there may hold any
    finite values: its weight of 0 makes them count for nothing). Return [N, H, d] in
    ``dtype``: the attention over every range's keys together; a row that no
    range saw becomes 0. Raise ValueError if lse's shape does not match parts'.
    An input whose last axis is not contiguous: compute it right, or raise ValueError.
    """
    if parts.dim() != 4 or lse.dim() != 3 or tuple(lse.shape) != tuple(parts.shape[:3]):
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}: "
                         f"expected [splits, N, H] = {tuple(parts.shape[:3])}")
    splits, tokens, heads, head_dim = parts.shape
    out = torch.zeros((tokens, heads, head_dim), dtype=dtype, device=parts.device)
    if splits == 0 or tokens * heads * head_dim == 0:
        return out                              # no range saw any row: zeros
    _merge_kernel[(tokens * heads,)](
        parts, lse, out, splits, heads,
        *parts.stride(), *lse.stride(), out.stride(0), out.stride(1), head_dim,
        BLOCK_D=triton.next_power_of_2(head_dim), num_warps=1 if head_dim <= 64 else 2)
    return out
