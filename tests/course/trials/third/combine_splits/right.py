"""Right: merges the ranges one at a time with a running maximum (online softmax, rescaling what it
has when a larger log-sum-exp arrives) instead of loading every split's lse at once; takes every stride, the last axis's too.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _merge_ranges(PARTS, LSE, OUT, num_splits, heads, head_dim,
                  sp_s, sp_n, sp_h, sp_d, sl_s, sl_n, sl_h, so_n, so_h,
                  BLOCK_D: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    token, head = row // heads, row % heads
    dims = tl.arange(0, BLOCK_D)
    inside = dims < head_dim
    running_max = float("-inf")
    denominator = 0.0
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for s in range(0, num_splits):
        lse = tl.load(LSE + s * sl_s + token * sl_n + head * sl_h)
        new_max = tl.maximum(running_max, lse)
        # what was summed so far, rescaled to the new maximum (nothing yet: 0)
        keep = tl.where(running_max == float("-inf"), 0.0, tl.exp(running_max - new_max))
        # this range's weight; a range that held no key (lse -inf) weighs nothing
        weight = tl.where(lse == float("-inf"), 0.0, tl.exp(lse - new_max))
        part = tl.load(PARTS + s * sp_s + token * sp_n + head * sp_h + dims * sp_d,
                       mask=inside, other=0.0)
        acc = acc * keep + weight * part
        denominator = denominator * keep + weight
        running_max = new_max
    merged = tl.where(denominator > 0, acc / denominator, 0.0)      # no range saw it: 0
    tl.store(OUT + token * so_n + head * so_h + dims, merged.to(OUT.dtype.element_ty), mask=inside)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d], lse [splits, N, H] -> the attention over all ranges, [N, H, d] in dtype."""
    if parts.dim() != 4 or lse.dim() != 3 or tuple(lse.shape) != tuple(parts.shape[:3]):
        raise ValueError(f"lse {tuple(lse.shape)} must be parts {tuple(parts.shape)} "
                         f"without its last axis")
    splits, tokens, heads, head_dim = parts.shape
    out = torch.empty((tokens, heads, head_dim), dtype=dtype, device=parts.device)
    if out.numel() == 0:
        return out
    _merge_ranges[(tokens * heads,)](
        parts, lse, out, splits, heads, head_dim,
        *parts.stride(), *lse.stride(), out.stride(0), out.stride(1),
        BLOCK_D=triton.next_power_of_2(head_dim), num_warps=1 if head_dim <= 64 else 2)
    return out
