"""Stage 5: attention over a paged KV cache.

The cache is a pool of blocks of ``block_size`` tokens: [num_blocks *
block_size, KVH, d] rows (the same memory as [num_blocks, block_size, KVH, d]).
Sequence s's token j lives in block block_tables[s, j // block_size], at
offset j % block_size. The kernel is stage 4's ragged kernel with that one
indirection: the shared tile, in its PAGED form, looks each key block up in
the sequence's block table.

Split-KV (flash decoding): a decode step has one query per sequence, so with
few sequences there are few programs, each walking a long context alone. The
split path cuts each context into ``num_splits`` ranges, runs one program per
range, and combines the partial results by their log-sum-exp.
"""
import torch
import triton
import triton.language as tl

from .contiguous_attention import causal_attention_tile, check_cache
from .online_softmax import launch_options
from .ragged_attention import sequence_rows


# ANCHOR: kernel
@triton.jit(do_not_specialize=["stride_table"])     # the block table's width changes every step
def _paged_attention_kernel(
    Q, K, V, O, CU_SEQLENS_Q, SEQ_LENS, BLOCK_TABLES,  # q/o [N, H, d]; k/v cache [blocks * size, KVH, d]
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh, stride_table, block_size, scale,
    GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
):
    seq, q_start, num_queries = sequence_rows(CU_SEQLENS_Q)
    if tl.program_id(0) * BLOCK_M >= num_queries:
        return
    context_len = tl.load(SEQ_LENS + seq)
    causal_attention_tile(Q + q_start * stride_qt, K, V, O + q_start * stride_ot,
                          BLOCK_TABLES + seq * stride_table, block_size,    # this sequence's block table
                          Q, 0, stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
                          tl.program_id(0), num_queries, context_len, 0, context_len, scale,
                          GROUP, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION, True, False)
# ANCHOR_END: kernel


# ANCHOR: split_kernel
@triton.jit(do_not_specialize=["stride_lse_part", "stride_table", "split_len"])
def _paged_attention_split_kernel(
    Q, K, V, O_PARTS, LSE_PARTS, CU_SEQLENS_Q, SEQ_LENS, BLOCK_TABLES,  # parts: [splits, N, H, (d)]
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh, stride_part, stride_lse_part,
    stride_lse_t, stride_table, block_size, split_len, scale,
    GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
):
    split = tl.program_id(0)
    seq, q_start, num_queries = sequence_rows(CU_SEQLENS_Q)       # at most BLOCK_M queries: one tile
    context_len = tl.load(SEQ_LENS + seq)
    first_key = split * split_len                                 # this program's range of keys
    causal_attention_tile(Q + q_start * stride_qt, K, V, O_PARTS + split * stride_part + q_start * stride_ot,
                          BLOCK_TABLES + seq * stride_table, block_size,
                          LSE_PARTS + split * stride_lse_part + q_start * stride_lse_t, stride_lse_t,
                          stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
                          0, num_queries, context_len, first_key, tl.minimum(context_len, first_key + split_len),
                          scale, GROUP, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION, True, True)
# ANCHOR_END: split_kernel


# ANCHOR: wrapper
def paged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables, block_size, max_query_len=None,
                    num_splits=None):
    """q [N, H, d] packed as in stage 4; k/v cache [num_blocks * block_size, KVH, d];
    block_tables [S, max blocks] int32 (entries past a sequence's end are ignored).
    num_splits: split each context into that many key ranges (decode steps
    only); None chooses: split long contexts when there are too few programs
    to fill the GPU."""
    num_heads, head_dim = q.shape[1], q.shape[2]
    check_cache(q[:0], k_cache, v_cache, 0)
    if k_cache.shape[0] % block_size:
        raise ValueError(f"cache of {k_cache.shape[0]} rows is not whole blocks of {block_size}")
    if max_query_len is None:
        max_query_len = int((cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max())
    opts = launch_options(q, head_dim, max_query_len)
    common = (q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1))
    num_splits = num_splits or choose_splits(q, len(seq_lens), block_tables.shape[1] * block_size, max_query_len)
    if num_splits > 1:
        return split_kv(q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables, block_size, num_splits,
                        max_query_len, opts, common)
    out = torch.empty_like(q)
    grid = (triton.cdiv(max_query_len, opts["BLOCK_M"]), num_heads, len(seq_lens))
    _paged_attention_kernel[grid](
        q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_tables, *common,
        out.stride(0), out.stride(1), block_tables.stride(0), block_size, head_dim ** -0.5,
        GROUP=num_heads // k_cache.shape[-2], **opts,
    )
    return out
# ANCHOR_END: wrapper


# ANCHOR: split_kv
def split_kv(q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables, block_size, num_splits,
             max_query_len, opts, common):
    if max_query_len > opts["BLOCK_M"]:
        raise ValueError(f"split-KV serves decode-like steps; {max_query_len} queries in one sequence is too many")
    num_heads, head_dim = q.shape[1], q.shape[2]
    max_context = block_tables.shape[1] * block_size
    split_len = triton.cdiv(triton.cdiv(max_context, num_splits), opts["BLOCK_N"]) * opts["BLOCK_N"]
    parts = torch.empty((num_splits, *q.shape), dtype=torch.float32, device=q.device)     # [splits, N, H, d]
    lse = torch.empty((num_splits, q.shape[0], num_heads), dtype=torch.float32, device=q.device)
    grid = (num_splits, num_heads, len(seq_lens))
    _paged_attention_split_kernel[grid](
        q, k_cache, v_cache, parts, lse, cu_seqlens_q, seq_lens, block_tables, *common,
        parts.stride(1), parts.stride(2), parts.stride(0), lse.stride(0), lse.stride(1), block_tables.stride(0),
        block_size, split_len, head_dim ** -0.5, GROUP=num_heads // k_cache.shape[-2], **opts,
    )
    # Each part is softmax over its own keys. Weighting part s by exp(lse_s - logsumexp(lse))
    # (a softmax over the splits) turns them into the softmax over all keys.
    weights = torch.softmax(lse, dim=0).nan_to_num(0.0)                                  # [splits, N, H]
    return (weights[..., None] * parts).sum(0).to(q.dtype)
# ANCHOR_END: split_kv


def choose_splits(q, num_seqs, max_context, max_query_len) -> int:
    """Split only decode steps with long contexts whose (sequence, head)
    programs are too few to occupy every streaming multiprocessor."""
    if not q.is_cuda or max_query_len > 1 or max_context < 1024:
        return 1
    programs = num_seqs * q.shape[1]
    processors = torch.cuda.get_device_properties(q.device).multi_processor_count
    return max(1, min(16, 2 * processors // programs, max_context // 512))
