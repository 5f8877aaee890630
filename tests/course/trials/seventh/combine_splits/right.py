"""Right: instead of loading every split at once (a power-of-two tile of
splits, a softmax over it), each program walks the splits one at a time with
a running maximum and running sums (online softmax over the splits), so any
number of splits works with no BLOCK_S. All four strides of parts, all three
of lse and the output's are passed, so inputs of any layout, the last axis
included, are computed right; a range whose lse is -inf adds nothing (its
weight is made exactly 0 with tl.where, so a nan or inf in its parts cannot
leak in), and a row no range saw ends 0."""
import torch
import triton
import triton.language as tl


@triton.jit
def _combine_kernel(P, L, O, num_splits,
                    sp_s, sp_t, sp_h, sp_d, sl_s, sl_t, sl_h, so_t, so_h, so_d,
                    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1).to(tl.int64)
    d = tl.arange(0, BLOCK_D)
    d_ok = d < HEAD_DIM
    run_max = tl.full([1], float("-inf"), tl.float32)
    run_sum = tl.zeros([1], tl.float32)
    run_acc = tl.zeros([BLOCK_D], tl.float32)
    # pointers walk the splits (pointer arithmetic is 64-bit)
    part_ptr = P + token * sp_t + head * sp_h + d * sp_d
    lse_ptr = L + token * sl_t + head * sl_h + tl.zeros([1], tl.int32)
    for _ in range(0, num_splits):
        lse = tl.load(lse_ptr)
        part = tl.load(part_ptr, mask=d_ok, other=0.0)
        new_max = tl.maximum(run_max, lse)
        finite = new_max > float("-inf")
        ref = tl.where(finite, new_max, 0.0)
        keep = tl.where(run_max > float("-inf"), tl.exp(run_max - ref), 0.0)
        w = tl.where(lse > float("-inf"), tl.exp(lse - ref), 0.0)
        run_sum = run_sum * keep + w
        run_acc = run_acc * keep + tl.sum(w) * tl.where(lse > float("-inf"), part, 0.0)
        run_max = new_max
        part_ptr += sp_s
        lse_ptr += sl_s
    total = tl.sum(run_sum)
    out = run_acc / tl.where(total > 0.0, total, 1.0)
    tl.store(O + token * so_t + head * so_h + d * so_d, out.to(O.dtype.element_ty),
             mask=d_ok)


def combine_splits(parts, lse, dtype):
    if parts.dim() != 4 or lse.dim() != 3 or tuple(lse.shape) != tuple(parts.shape[:3]):
        raise ValueError(f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    splits, tokens, heads, head_dim = parts.shape
    out = torch.empty((tokens, heads, head_dim), dtype=dtype, device=parts.device)
    if out.numel() == 0:
        return out
    if splits == 0:
        return out.zero_()
    _combine_kernel[(tokens, heads)](
        parts, lse, out, splits,
        *parts.stride(), *lse.stride(), *out.stride(),
        HEAD_DIM=head_dim, BLOCK_D=max(16, triton.next_power_of_2(head_dim)))
    return out
