"""Stage 4: attention over a ragged batch, no padding anywhere.

The step's tokens from every sequence are packed into one flat tensor:
sequence s owns query rows cu_seqlens_q[s]:cu_seqlens_q[s+1] (its whole
prompt if it is being prefilled, one token if it is decoding), and its
context of seq_lens[s] tokens starts at cache row seq_starts[s]. Each program
picks a sequence, shifts the pointers to it, and runs the causal tile of
stage 1 (``tile.py``).
"""
import torch
import triton
import triton.language as tl

from .online_softmax import check_cache, launch_options, tile_grid
from .tile import causal_tile


@triton.jit
def sequence_rows(CU_SEQLENS_Q):
    """This program's sequence (grid axis 2): its index, first packed row and row count."""
    seq = tl.program_id(2)
    q_start = tl.load(CU_SEQLENS_Q + seq)
    return seq, q_start, tl.load(CU_SEQLENS_Q + seq + 1) - q_start


# ANCHOR: kernel
@triton.jit
def _ragged_attention_kernel(
    # q/o [N, H, d]; k/v cache [rows, KVH, d]
    Q, K, V, O, CU_SEQLENS_Q, SEQ_LENS, SEQ_STARTS,
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh, scale,
    GROUP: tl.constexpr, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr,
):
    seq, q_start, num_queries = sequence_rows(CU_SEQLENS_Q)
    if tl.program_id(0) * (BLOCK_M // HEADS) >= num_queries:
        # the grid is sized for the longest sequence; this one is shorter
        return
    kv_start = tl.load(SEQ_STARTS + seq).to(tl.int64)     # rows * stride may pass 2**31
    context_len = tl.load(SEQ_LENS + seq)
    causal_tile(Q + q_start * stride_qt, K + kv_start * stride_kt,
                V + kv_start * stride_kt, O + q_start * stride_ot,
                stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
                tl.program_id(0), num_queries, context_len, 0, context_len, scale,
                GROUP, HEADS, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION)
# ANCHOR_END: kernel


# ANCHOR: wrapper
def ragged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, seq_starts,
                     max_query_len=None):
    """q [N, H, d] packed; caches [rows, KVH, d]; cu_seqlens_q [S+1], seq_lens [S],
    seq_starts [S] int tensors. max_query_len: the longest sequence's new tokens
    (pass it to avoid a device sync). Returns [N, H, d]."""
    num_heads, head_dim = q.shape[1], q.shape[2]
    check_cache(q[:0], k_cache, v_cache, 0)
    if max_query_len is None:
        max_query_len = int((cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max())
    opts = launch_options(q, k_cache, max_query_len, sequences=len(seq_lens))
    out = torch.empty_like(q)
    grid = (*tile_grid(opts, max_query_len, num_heads), len(seq_lens))
    _ragged_attention_kernel[grid](
        q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, seq_starts,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1),
        out.stride(0), out.stride(1),
        head_dim ** -0.5, **opts,
    )
    return out
# ANCHOR_END: wrapper
