"""Misconception: the weights are exp(lse_s) / sum exp(lse), with no max taken out first (an
lse is a log, so exp of it is just the denominator). Fine for everyday lse values; with
lse = [100, 99] exp overflows fp32 to inf and the row is nan (lse = -150: it underflows to 0)."""
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
    total = 0.0
    acc = tl.zeros((BLOCK_D,), tl.float32)
    for s in range(0, num_splits):
        w = tl.exp(tl.load(LSE + s * sl_s + n * sl_n + h * sl_h))     # the range's denominator
        part = tl.load(PARTS + s * sp_s + n * sp_n + h * sp_h + dims * sp_d, mask=d_ok, other=0.0)
        total += w
        acc += w * part
    result = tl.where(total > 0.0, acc / tl.where(total > 0.0, total, 1.0), 0.0)
    tl.store(OUT + n * so_n + h * so_h + dims * so_d, result, mask=d_ok)


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
