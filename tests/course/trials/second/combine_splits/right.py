"""Correct, written differently: merges the splits in one streaming pass, online-softmax style (a running
max and denominator, rescaling the accumulator), instead of loading every split's lse to take the max first;
it honours every stride, the last axis's included, so non-contiguous inputs are computed, not refused.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _merge_kernel(PARTS, LSE, OUT, num_splits, num_heads,
                  sp_s, sp_n, sp_h, sp_d, sl_s, sl_n, sl_h, so_n, so_h, so_d,
                  HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    n = row // num_heads
    h = row % num_heads
    offs = tl.arange(0, BLOCK_D)
    d_ok = offs < HEAD_DIM
    n64 = n.to(tl.int64)
    h64 = h.to(tl.int64)
    part_row = PARTS + n64 * sp_n + h64 * sp_h + offs.to(tl.int64) * sp_d
    lse_row = LSE + n64 * sl_n + h64 * sl_h
    run_max = tl.full((), float("-inf"), tl.float32)
    run_sum = tl.zeros((), tl.float32)
    acc = tl.zeros((BLOCK_D,), tl.float32)
    for s in range(num_splits):
        x = tl.load(lse_row + s * sl_s).to(tl.float32)
        new_max = tl.maximum(run_max, x)
        pivot = tl.where(new_max == float("-inf"), 0.0, new_max)   # no -inf - -inf
        rescale = tl.exp(run_max - pivot)
        w = tl.exp(x - pivot)
        part = tl.load(part_row + s * sp_s, mask=d_ok, other=0.0).to(tl.float32)
        acc = acc * rescale + w * part
        run_sum = run_sum * rescale + w
        run_max = new_max
    safe = tl.where(run_sum > 0, run_sum, 1.0)
    out = tl.where(run_sum > 0, acc / safe, 0.0)
    tl.store(OUT + n64 * so_n + h64 * so_h + offs.to(tl.int64) * so_d,
             out.to(OUT.dtype.element_ty), mask=d_ok)


def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d] (fp32): each range's softmax-weighted V over its
    own keys; lse [splits, N, H] (fp32): the log of each range's softmax
    denominator, -inf where the range held no key. Return [N, H, d] in
    ``dtype``: the attention over every range's keys together; a row that no
    range saw becomes 0. Raise ValueError if lse's shape does not match parts'.
    An input whose last axis is not contiguous: compute it right, or raise ValueError.
    """
    if parts.dim() != 4 or lse.dim() != 3 or tuple(lse.shape) != tuple(parts.shape[:3]):
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    if lse.device != parts.device:
        raise ValueError("parts and lse are on different devices")
    splits, n, h, d = parts.shape
    out = torch.empty((n, h, d), dtype=dtype, device=parts.device)
    if out.numel() == 0:
        return out
    if splits == 0:
        return out.zero_()
    _merge_kernel[(n * h,)](
        parts, lse, out, splits, h,
        *parts.stride(), *lse.stride(), *out.stride(),
        HEAD_DIM=d, BLOCK_D=triton.next_power_of_2(d))
    return out
