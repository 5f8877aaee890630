"""Stage 2: attention over a left-padded batch.

Every row of the batch is padded on the left so all rows end at the same
column; row b's first pad_lens[b] cache columns hold padding. The kernel is
stage 1's tile with one more program axis (the batch row) and one more bound:
the row's real keys start at column pad_lens[b]. Query rows that are
themselves padding see no key and produce zeros.

Where a row's context ends (seq_lens[b]) is read from the GPU's memory, not
passed as a number: a CUDA graph replays a kernel with the numbers it was
captured with, but reads memory afresh, so one graph serves every decode step
of a batch (chapter 8).
"""
import torch
import triton
import triton.language as tl

from .online_softmax import STEP_VARYING, check_cache, launch_options, tile_grid
from .tile import causal_tile


# ANCHOR: kernel
# the strides scale with num_queries
@triton.jit(do_not_specialize=STEP_VARYING + ["stride_qb", "stride_ob"])
def _padded_attention_kernel(
    # q/o [B, Lq, H, d]; k/v cache [B, T, KVH, d]; seq_lens, pad_lens [B]
    Q, K, V, O, SEQ_LENS, PAD_LENS,
    stride_qb, stride_qt, stride_qh, stride_kb, stride_kt, stride_kh,
    stride_ob, stride_ot, stride_oh,
    num_queries, scale,
    GROUP: tl.constexpr, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr,
):
    row = tl.program_id(2)         # the new axis: which sequence of the batch
    pad = tl.load(PAD_LENS + row)  # the new bound: its keys start after its padding
    context_len = tl.load(SEQ_LENS + row)
    causal_tile(Q + row * stride_qb, K + row * stride_kb,
                V + row * stride_kb, O + row * stride_ob,
                stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
                tl.program_id(0), num_queries, context_len, pad, context_len, scale,
                GROUP, HEADS, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION)
# ANCHOR_END: kernel


# ANCHOR: wrapper
def padded_attention(q, k_cache, v_cache, seq_lens, pad_lens):
    """q [B, Lq, H, d]; k/v cache [B', T, KVH, d] (B' >= B); seq_lens, pad_lens
    [B] int tensors: row b's context is cache columns 0..seq_lens[b] (its
    newest Lq included), the first pad_lens[b] of them padding. Returns
    [B, Lq, H, d] (zeros for query rows that are padding)."""
    batch, num_queries, num_heads, head_dim = q.shape
    check_cache(q, k_cache, v_cache)
    for name, lens in (("seq_lens", seq_lens), ("pad_lens", pad_lens)):
        if lens.shape != (batch,):
            raise ValueError(f"{name} must have shape ({batch},), got {tuple(lens.shape)}")
    opts = launch_options(q, k_cache, num_queries, sequences=batch)
    out = torch.empty_like(q)
    grid = (*tile_grid(opts, num_queries, num_heads), batch)
    _padded_attention_kernel[grid](
        q, k_cache, v_cache, out, seq_lens.to(device=q.device, dtype=torch.int32),
        pad_lens.to(device=q.device, dtype=torch.int32),
        q.stride(0), q.stride(1), q.stride(2),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        num_queries, head_dim ** -0.5, **opts,
    )
    return out
# ANCHOR_END: wrapper
