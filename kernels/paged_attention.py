"""Stage 5: attention over a paged KV cache.

The cache is a pool of blocks of ``block_size`` tokens: [num_blocks *
block_size, KVH, d] rows (the same memory as [num_blocks, block_size, KVH, d]).
Sequence s's token j lives in block block_tables[s, j // block_size], at
offset j % block_size. The kernel is stage 4's ragged kernel with that one
indirection: the shared tile, in its PAGED form, looks each key block up in
the sequence's block table.
"""
import torch
import triton
import triton.language as tl

from .contiguous_attention import causal_attention_tile, check_cache
from .online_softmax import launch_options


# ANCHOR: kernel
@triton.jit
def _paged_attention_kernel(
    Q, K, V, O, CU_SEQLENS_Q, SEQ_LENS, BLOCK_TABLES,  # q/o [N, H, d]; k/v cache [blocks * size, KVH, d]
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh, stride_table, block_size, scale,
    GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
):
    seq = tl.program_id(2)
    q_start = tl.load(CU_SEQLENS_Q + seq)
    num_queries = tl.load(CU_SEQLENS_Q + seq + 1) - q_start
    if tl.program_id(0) * BLOCK_M >= num_queries:
        return
    causal_attention_tile(Q + q_start * stride_qt, K, V, O + q_start * stride_ot,
                          BLOCK_TABLES + seq * stride_table, block_size,    # this sequence's block table
                          stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
                          num_queries, tl.load(SEQ_LENS + seq), 0, scale,
                          GROUP, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION, True)
# ANCHOR_END: kernel


# ANCHOR: wrapper
def paged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables, block_size, max_query_len=None):
    """q [N, H, d] packed as in stage 4; k/v cache [num_blocks * block_size, KVH, d];
    block_tables [S, max_blocks] int32 (entries past a sequence's end are ignored)."""
    num_heads, head_dim = q.shape[1], q.shape[2]
    check_cache(q[:0], k_cache, v_cache, 0)
    if k_cache.shape[0] % block_size:
        raise ValueError(f"cache of {k_cache.shape[0]} rows is not whole blocks of {block_size}")
    if max_query_len is None:
        max_query_len = int((cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max())
    opts = launch_options(q, head_dim, max_query_len)
    out = torch.empty_like(q)
    grid = (triton.cdiv(max_query_len, opts["BLOCK_M"]), num_heads, len(seq_lens))
    _paged_attention_kernel[grid](
        q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_tables,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), out.stride(0), out.stride(1),
        block_tables.stride(0), block_size, head_dim ** -0.5,
        GROUP=num_heads // k_cache.shape[-2], **opts,
    )
    return out
# ANCHOR_END: wrapper
