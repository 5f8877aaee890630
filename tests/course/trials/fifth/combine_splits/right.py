"""Right: instead of loading all of a row's log-sum-exps at once, a softmax over them and
one weighted sum, each program streams through the splits one at a time (an online merge
that rescales its running sum as the max grows), in base 2 (exp2 of lse x log2 e); all strides passed."""
import torch
import triton
import triton.language as tl


@triton.jit
def _merge_kernel(PARTS, LSE, OUT, splits, heads, head_dim,
                  sp0, sp1, sp2, sp3, sl0, sl1, sl2, so0, so1, so2,
                  BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    n = row // heads
    h = row % heads
    d = tl.arange(0, BLOCK_D)
    d_ok = d < head_dim
    LOG2E: tl.constexpr = 1.4426950408889634
    best = tl.full((), float("-inf"), tl.float32)       # the largest lse so far
    total = tl.full((), 0.0, tl.float32)                 # sum of 2^((lse - best) log2 e)
    acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for s in range(0, splits):
        lse = tl.load(LSE + s * sl0 + n * sl1 + h * sl2)
        new_best = tl.maximum(best, lse)
        # both -inf: nothing seen yet; shift by 0 so no -inf - -inf appears
        shift = tl.where(new_best == float("-inf"), 0.0, new_best)
        old_scale = tl.exp2((best - shift) * LOG2E)
        this_scale = tl.exp2((lse - shift) * LOG2E)
        part = tl.load(PARTS + s * sp0 + n * sp1 + h * sp2 + d * sp3, mask=d_ok, other=0.0)
        acc = acc * old_scale + part * this_scale
        total = total * old_scale + this_scale
        best = new_best
    safe_total = tl.where(total > 0.0, total, 1.0)
    result = tl.where(total > 0.0, acc / safe_total, 0.0)
    tl.store(OUT + n * so0 + h * so1 + d * so2, result.to(OUT.dtype.element_ty), mask=d_ok)


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
                         "expected [splits, N, H] for parts [splits, N, H, d]")
    splits, tokens, heads, head_dim = parts.shape
    out = torch.empty((tokens, heads, head_dim), dtype=dtype, device=parts.device)
    if tokens * heads * head_dim == 0:
        return out
    _merge_kernel[(tokens * heads,)](
        parts, lse, out, splits, heads, head_dim,
        *parts.stride(), *lse.stride(), *out.stride(),
        BLOCK_D=triton.next_power_of_2(head_dim))
    return out
