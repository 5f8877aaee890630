"""Right, written differently: one program per token row covers all its heads as a 2-D
[heads, d] tile, and the splits are merged in one online pass (a running max rescales what
was summed so far, in base 2 with exp2), instead of a max pass then a weighted-sum pass."""
import torch
import triton
import triton.language as tl

@triton.jit
def _combine_online_kernel(
    PARTS, LSE, OUT, num_splits, num_heads, head_dim,
    sp_s, sp_n, sp_h, sp_d,
    sl_s, sl_n, sl_h,
    so_n, so_h, so_d,
    BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr,
):
    row = tl.program_id(0)
    heads = tl.arange(0, BLOCK_H)
    dims = tl.arange(0, BLOCK_D)
    h_ok = heads < num_heads
    tile_ok = h_ok[:, None] & (dims[None, :] < head_dim)
    best = tl.full((BLOCK_H,), float("-inf"), tl.float32)     # running max of lse
    total = tl.zeros((BLOCK_H,), tl.float32)                  # sum of e^(lse - best)
    acc = tl.zeros((BLOCK_H, BLOCK_D), tl.float32)
    for s in range(0, num_splits):
        lse = tl.load(LSE + s * sl_s + row * sl_n + heads * sl_h,
                      mask=h_ok, other=float("-inf"))
        part = tl.load(PARTS + s * sp_s + row * sp_n + heads[:, None] * sp_h
                       + dims[None, :] * sp_d, mask=tile_ok, other=0.0)
        new_best = tl.maximum(best, lse)
        seen = new_best > float("-inf")                        # some range so far held keys
        safe = tl.where(seen, new_best, 0.0)
        # e^x as 2^(x log2 e), the difference taken first so a large lse loses no bits
        rescale = tl.where(seen, tl.exp2((best - safe) * 1.4426950408889634), 0.0)
        weight = tl.where(lse > float("-inf"), tl.exp2((lse - safe) * 1.4426950408889634), 0.0)
        total = total * rescale + weight
        acc = acc * rescale[:, None] + weight[:, None] * part
        best = new_best
    denom = tl.where(total > 0.0, total, 1.0)
    result = tl.where(total[:, None] > 0.0, acc / denom[:, None], 0.0)
    tl.store(OUT + row * so_n + heads[:, None] * so_h + dims[None, :] * so_d,
             result, mask=tile_ok)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d] (fp32): each range's softmax-weighted V over its
    own keys; lse [splits, N, H] (fp32): the log of each range's softmax
    denominator, -inf where the range held no key. Return [N, H, d] in
    ``dtype``: the attention over every range's keys together; a row that no
    range saw becomes 0. Raise ValueError if lse's shape does not match parts'.
    An input whose last axis is not contiguous: compute it right, or raise ValueError.
    """
    if parts.dim() != 4:
        raise ValueError(f"parts must be [splits, N, H, d], got shape {tuple(parts.shape)}")
    if tuple(lse.shape) != tuple(parts.shape[:3]):
        raise ValueError(f"lse has shape {tuple(lse.shape)}; parts {tuple(parts.shape)} "
                         f"needs {tuple(parts.shape[:3])}")
    splits, n, h, d = parts.shape
    out = torch.empty((n, h, d), dtype=dtype, device=parts.device)
    if out.numel() == 0:
        return out
    if splits == 0:
        return out.zero_()
    # every stride is passed, the last axis's too: any layout is read where it lies
    _combine_online_kernel[(n,)](
        parts, lse, out, splits, h, d,
        *parts.stride(), *lse.stride(), *out.stride(),
        BLOCK_H=triton.next_power_of_2(h), BLOCK_D=triton.next_power_of_2(d),
    )
    return out
