"""Misconception: split_kv always hands over fresh torch.empty buffers, so the kernel
computes flat offsets for contiguous [splits, N, H, d] and [splits, N, H] tensors and
never reads strides. Wrong for any strided view, e.g. parts[:, ::2] / lse[:, ::2]."""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(PARTS, LSE, OUT, splits, num_rows, head_dim,
                    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)                       # one (token, head) row
    s = tl.arange(0, BLOCK_S)
    d = tl.arange(0, BLOCK_D)
    s_ok, d_ok = s < splits, d < head_dim
    # packed layout: split s of row r is at (s * num_rows + r)
    lse = tl.load(LSE + s * num_rows + row, mask=s_ok, other=float("-inf"))
    top = tl.max(lse, axis=0)
    top = tl.where(top == float("-inf"), 0.0, top)
    w = tl.exp(lse - top)
    total = tl.sum(w, axis=0)
    parts = tl.load(PARTS + (s[:, None] * num_rows + row) * head_dim + d[None, :],
                    mask=s_ok[:, None] & d_ok[None, :], other=0.0)
    acc = tl.sum(parts * w[:, None], axis=0)
    out = tl.where(total > 0.0, acc / tl.where(total > 0.0, total, 1.0), 0.0)
    tl.store(OUT + row * head_dim + d, out.to(OUT.dtype.element_ty), mask=d_ok)


def combine_splits(parts, lse, dtype):
    """Merge split-KV's partial results (see the stub's contract)."""
    if parts.dim() != 4 or tuple(lse.shape) != tuple(parts.shape[:3]):
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    splits, tokens, heads, head_dim = parts.shape
    out = torch.empty((tokens, heads, head_dim), dtype=dtype, device=parts.device)
    if tokens * heads == 0:
        return out
    _combine_kernel[(tokens * heads,)](
        parts, lse, out, splits, tokens * heads, head_dim,
        BLOCK_S=triton.next_power_of_2(splits), BLOCK_D=triton.next_power_of_2(head_dim))
    return out
