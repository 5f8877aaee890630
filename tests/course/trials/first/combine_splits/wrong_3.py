"""Misconception: the contract's layout clause is only about the last axis, so once stride(-1)
is 1 the tensors may be indexed as if packed, from their shapes. Goes wrong on parts =
big[..., :d] (a slice of a wider tensor) or an N/H-transposed view: it reads the wrong rows."""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(PARTS, LSE, OUT, num_splits, num_rows, num_heads,
                    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr):
    n = tl.program_id(0)
    h = tl.program_id(1)
    dims = tl.arange(0, BLOCK_D)
    d_ok = dims < HEAD_DIM
    row = n * num_heads + h                      # (n, h) in a packed [N, H] grid
    plane = num_rows * num_heads                 # one split's rows
    biggest = float("-inf")
    for s in range(0, num_splits):
        biggest = tl.maximum(biggest, tl.load(LSE + s * plane + row))
    safe = tl.where(biggest == float("-inf"), 0.0, biggest)
    total = 0.0
    acc = tl.zeros((BLOCK_D,), tl.float32)
    for s in range(0, num_splits):
        w = tl.exp(tl.load(LSE + s * plane + row) - safe)
        part = tl.load(PARTS + (s * plane + row) * HEAD_DIM + dims, mask=d_ok, other=0.0)
        total += w
        acc += w * part
    result = tl.where(total > 0.0, acc / tl.where(total > 0.0, total, 1.0), 0.0)
    tl.store(OUT + row * HEAD_DIM + dims, result, mask=d_ok)


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
    if parts.stride(-1) != 1:
        raise ValueError("parts' last axis must be contiguous")
    splits, n, h, d = parts.shape
    out = torch.empty((n, h, d), dtype=dtype, device=parts.device)
    if out.numel() == 0:
        return out
    _combine_kernel[(n, h)](parts, lse, out, splits, n, h,
                            HEAD_DIM=d, BLOCK_D=triton.next_power_of_2(d))
    return out
