"""Misconception: an empty range has lse -inf, so exp(lse - max) = 0 and it weighs nothing;
no special case is needed. True while some range saw keys, but a row every range missed has
max = -inf, exp(-inf - -inf) = nan, and comes out nan instead of 0."""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(PARTS, LSE, OUT, num_splits, head_dim,
                    sp_s, sp_n, sp_h, sp_d, sl_s, sl_n, sl_h, so_n, so_h, so_d,
                    BLOCK_D: tl.constexpr):
    n = tl.program_id(0)
    h = tl.program_id(1)
    dims = tl.arange(0, BLOCK_D)
    d_ok = dims < head_dim
    lse_row = LSE + n * sl_n + h * sl_h
    biggest = float("-inf")
    for s in range(0, num_splits):
        biggest = tl.maximum(biggest, tl.load(lse_row + s * sl_s))
    total = 0.0
    acc = tl.zeros((BLOCK_D,), tl.float32)
    for s in range(0, num_splits):
        w = tl.exp(tl.load(lse_row + s * sl_s) - biggest)
        part = tl.load(PARTS + s * sp_s + n * sp_n + h * sp_h + dims * sp_d, mask=d_ok, other=0.0)
        total += w
        acc += w * part
    tl.store(OUT + n * so_n + h * so_h + dims * so_d, acc / total, mask=d_ok)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d] (fp32): each range's softmax-weighted V over its
    own keys; lse [splits, N, H] (fp32): the log of each range's softmax
    denominator, -inf where the range held no key. Return [N, H, d] in
    ``dtype``: the attention over every range's keys together; a row that no
    range saw becomes 0. Raise ValueError if lse's shape does not match parts'.
    An input whose last axis is not contiguous: compute it right, or raise ValueError.
    """
    if parts.dim() != 4 or lse.shape != parts.shape[:3]:
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    splits, n, h, d = parts.shape
    out = torch.empty((n, h, d), dtype=dtype, device=parts.device)
    if out.numel() == 0:
        return out
    _combine_kernel[(n, h)](parts, lse, out, splits, d,
                            *parts.stride(), *lse.stride(), *out.stride(),
                            BLOCK_D=triton.next_power_of_2(d))
    return out
