"""Right, written differently: no softmax over a block of log-sum-exps. Each program walks the
splits one at a time and merges them online (running max, rescaled sum, as flash-decoding's
pairwise merge), skipping an empty range's parts outright; every tensor goes through its strides."""
import torch
import triton
import triton.language as tl


@triton.jit
def _merge_ranges(PARTS, LSE, OUT, num_splits, num_heads, head_dim,
                  sp_s, sp_n, sp_h, sp_d, sl_s, sl_n, sl_h, so_n, so_h, so_d,
                  BLOCK_D: tl.constexpr):
    row = tl.program_id(0)                     # one (token, head) row
    n = row // num_heads
    h = row % num_heads
    d = tl.arange(0, BLOCK_D)
    d_ok = d < head_dim
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    total = tl.zeros([1], dtype=tl.float32)    # sum of weights, relative to best
    best = tl.full([1], float("-inf"), tl.float32)
    for s in range(0, num_splits):
        lse = tl.load(LSE + s * sl_s + n * sl_n + h * sl_h + tl.zeros([1], dtype=tl.int32))
        seen = lse > float("-inf")
        new_best = tl.maximum(best, lse)
        # measured from a finite point, so -inf - -inf (nan) never appears: nothing merged yet
        # (best = -inf) rescales to 0, an empty range weighs exp(-inf) = 0
        pivot = tl.where(new_best > float("-inf"), new_best, 0.0)
        keep = tl.exp(best - pivot)
        weight = tl.exp(lse - pivot)
        part = tl.load(PARTS + s * sp_s + n * sp_n + h * sp_h + d * sp_d, mask=d_ok, other=0.0)
        part = tl.where(seen, part, 0.0)       # an empty range's parts may be anything
        acc = acc * keep + weight * part
        total = total * keep + weight
        best = tl.where(seen, new_best, best)
    result = tl.where(total > 0, acc / tl.where(total > 0, total, 1.0), 0.0)
    tl.store(OUT + n * so_n + h * so_h + d * so_d, result, mask=d_ok)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d] (fp32): each range's softmax-weighted V over its
    own keys; lse [splits, N, H] (fp32): the log of each range's softmax
    denominator, -inf where the range held no key (its parts there may hold
    anything: only its weight of 0 makes them count for nothing). Return [N, H, d] in
    ``dtype``: the attention over every range's keys together; a row that no
    range saw becomes 0. Raise ValueError if lse's shape does not match parts'.
    An input whose last axis is not contiguous: compute it right, or raise ValueError.
    """
    if parts.dim() != 4 or lse.dim() != 3 or tuple(lse.shape) != tuple(parts.shape[:3]):
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}: "
                         "expected parts [splits, N, H, d] and lse [splits, N, H]")
    num_splits, tokens, heads, head_dim = parts.shape
    out = torch.empty((tokens, heads, head_dim), dtype=dtype, device=parts.device)
    if out.numel() == 0:
        return out
    if num_splits == 0:
        return out.zero_()
    _merge_ranges[(tokens * heads,)](
        parts, lse, out, num_splits, heads, head_dim,
        *parts.stride(), *lse.stride(), *out.stride(),
        BLOCK_D=triton.next_power_of_2(head_dim))
    return out
