"""Stage 5: attention over a paged KV cache.

The cache is a pool of blocks of ``block_size`` tokens: [num_blocks *
block_size, KVH, d] rows (the same memory as [num_blocks, block_size, KVH, d]).
Sequence s's token j lives in block block_tables[s, j // block_size], at
offset j % block_size. The kernel is stage 4's ragged kernel with that one
indirection: its tile is stage 1's, built from the same pieces
(``tile.py``), with each key block looked up in the sequence's block table.

Split-KV (flash decoding): a decode step has one query per sequence, so with
few sequences there are few programs, each walking a long context alone. The
split path cuts each context into ``num_splits`` ranges, runs one program per
range, and combines the partial results by their log-sum-exp.
"""
import functools

import torch
import triton
import triton.language as tl

from .online_softmax import (check_cache, empty_rows, fills_the_gpu, launch_options,
                             multiprocessors, tile_grid)
from .ragged_attention import sequence_rows
from .tile import attend_keys, key_range, store_rows, tile_queries


# ANCHOR: key_rows
@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """The cache rows of a sequence's keys (columns of its context): key j lives
    in block BLOCK_TABLE[j // block_size], at offset j % block_size. Keys past
    context_len read no table entry (their rows are masked out later)."""
    block = tl.load(BLOCK_TABLE + keys // block_size, mask=keys < context_len, other=0)
    return block * block_size + keys % block_size
# ANCHOR_END: key_rows


# ANCHOR: tile
@triton.jit
def paged_tile(
    # one sequence: q/o [Lq, H, d]; k/v cache [blocks * size, KVH, d]
    Q, K, V, O,
    BLOCK_TABLE, block_size,          # this sequence's blocks, in order
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
    m_block, num_queries, context_len, first_key, key_end, scale,
    GROUP: tl.constexpr, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """tile.causal_tile, but key j lives in block BLOCK_TABLE[j // block_size]
    at offset j % block_size. Returns each row's log-sum-exp (-inf where the
    row saw no key), its query and head, and which rows are real: split-KV
    stores them to combine its ranges."""
    q, query, head, row_ok, kv_head = tile_queries(
        Q, stride_qt, stride_qh, m_block, num_queries,
        GROUP, HEADS, HEAD_DIM, BLOCK_D, BLOCK_M)
    m_i, l_i, acc = empty_rows(BLOCK_M, BLOCK_D)
    start_key, stop_key = key_range(m_block, num_queries, context_len, first_key,
                                    key_end, HEADS, BLOCK_M, BLOCK_N)
    for start in range(start_key, stop_key, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        rows = key_rows(BLOCK_TABLE, keys, block_size, context_len)   # the one change
        m_i, l_i, acc = attend_keys(
            q, query, K, V, rows, keys, kv_head,
            stride_kt, stride_kh, num_queries, context_len, first_key, key_end,
            m_i, l_i, acc, scale, HEAD_DIM, BLOCK_D, PRECISION)
    store_rows(O, acc, l_i, query, head, row_ok, stride_ot, stride_oh,
               HEAD_DIM, BLOCK_D)
    return m_i + tl.log(tl.maximum(l_i, 1e-30)), query, head, row_ok
# ANCHOR_END: tile


# ANCHOR: kernel
# the block table's width changes every step
@triton.jit(do_not_specialize=["stride_table"])
def _paged_attention_kernel(
    # q/o [N, H, d]; k/v cache [blocks * size, KVH, d]
    Q, K, V, O, CU_SEQLENS_Q, SEQ_LENS, BLOCK_TABLES,
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
    stride_table, block_size, scale,
    GROUP: tl.constexpr, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr,
):
    seq, q_start, num_queries = sequence_rows(CU_SEQLENS_Q)
    if tl.program_id(0) * (BLOCK_M // HEADS) >= num_queries:
        return
    context_len = tl.load(SEQ_LENS + seq)
    paged_tile(Q + q_start * stride_qt, K, V, O + q_start * stride_ot,
               # this sequence's block table
               BLOCK_TABLES + seq * stride_table, block_size,
               stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
               tl.program_id(0), num_queries, context_len, 0, context_len, scale,
               GROUP, HEADS, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION)
# ANCHOR_END: kernel


# ANCHOR: tiles_kernel
@triton.jit(do_not_specialize=["stride_table"])
def _paged_attention_tiles_kernel(
    Q, K, V, O, CU_SEQLENS_Q, SEQ_LENS, BLOCK_TABLES, TILE_SEQS, TILE_BLOCKS,
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
    stride_table, block_size, scale,
    GROUP: tl.constexpr, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """_paged_attention_kernel with its query tiles listed instead of gridded:
    program t runs tile TILE_BLOCKS[t] of sequence TILE_SEQS[t] (-1: none)."""
    seq = tl.load(TILE_SEQS + tl.program_id(0))
    if seq < 0:
        return
    q_start = tl.load(CU_SEQLENS_Q + seq)
    num_queries = tl.load(CU_SEQLENS_Q + seq + 1) - q_start
    context_len = tl.load(SEQ_LENS + seq)
    paged_tile(Q + q_start * stride_qt, K, V, O + q_start * stride_ot,
               BLOCK_TABLES + seq * stride_table, block_size,
               stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
               tl.load(TILE_BLOCKS + tl.program_id(0)), num_queries, context_len,
               0, context_len, scale,
               GROUP, HEADS, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION)
# ANCHOR_END: tiles_kernel


# ANCHOR: split_kernel
@triton.jit(do_not_specialize=["stride_part", "stride_lse_part", "stride_table",
                               "split_len"])
def _paged_attention_split_kernel(
    # parts: [splits, N, H, (d)]
    Q, K, V, O_PARTS, LSE_PARTS, CU_SEQLENS_Q, SEQ_LENS, BLOCK_TABLES,
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
    stride_part, stride_lse_part, stride_lse_t,
    stride_table, block_size, split_len, scale,
    GROUP: tl.constexpr, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr,
):
    split = tl.program_id(0)
    # few enough queries for one tile
    seq, q_start, num_queries = sequence_rows(CU_SEQLENS_Q)
    context_len = tl.load(SEQ_LENS + seq)
    # this program's range of keys
    first_key = split * split_len
    lse, query, head, row_ok = paged_tile(
        Q + q_start * stride_qt, K, V,
        O_PARTS + split * stride_part + q_start * stride_ot,
        BLOCK_TABLES + seq * stride_table, block_size,
        stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
        0, num_queries, context_len, first_key,
        tl.minimum(context_len, first_key + split_len), scale,
        GROUP, HEADS, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION)
    # log of the softmax denominator over this range's keys, for the combine kernel
    tl.store(
        LSE_PARTS + split * stride_lse_part + (q_start + query) * stride_lse_t + head,
        lse, mask=row_ok)
# ANCHOR_END: split_kernel


# ANCHOR: combine_kernel
@triton.jit(do_not_specialize=["num_splits", "stride_part", "stride_lse_part"])
def _combine_splits_kernel(
    # parts [splits, N, H, d], lse [splits, N, H]; o [N, H, d]
    O_PARTS, LSE_PARTS, O, num_splits,
    stride_part, stride_pt, stride_ph, stride_lse_part, stride_lse_t,
    stride_ot, stride_oh,
    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_S: tl.constexpr,
):
    """Row (token program_id(0), head program_id(1)): each split's output
    weighted by a softmax over the splits' log-sum-exps."""
    token, head = tl.program_id(0), tl.program_id(1)
    splits, offs_d = tl.arange(0, BLOCK_S), tl.arange(0, BLOCK_D)
    lse = tl.load(LSE_PARTS + splits * stride_lse_part + token * stride_lse_t + head,
                  mask=splits < num_splits, other=float("-inf"))
    top = tl.max(lse, 0)
    # a range with no key weighs 0
    weight = tl.exp(lse - tl.where(top == float("-inf"), 0.0, top))
    total = tl.sum(weight, 0)
    weight = weight / tl.where(total == 0.0, 1.0, total)
    ok = (splits[:, None] < num_splits) & (offs_d[None, :] < HEAD_DIM)
    parts = tl.load(O_PARTS + splits[:, None] * stride_part + token * stride_pt
                    + head * stride_ph + offs_d[None, :], mask=ok, other=0.0)
    out = tl.sum(weight[:, None] * parts, 0)
    tl.store(O + token * stride_ot + head * stride_oh + offs_d,
             out.to(O.dtype.element_ty), mask=offs_d < HEAD_DIM)
# ANCHOR_END: combine_kernel


# ANCHOR: wrapper
def paged_attention(q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables,
                    block_size, max_query_len=None, num_splits=None, pack_heads=True,
                    tile_keys=None):
    """q [N, H, d] packed as in stage 4; k/v cache [num_blocks * block_size, KVH, d];
    block_tables [S, max blocks] int32 (entries past a sequence's end are ignored).
    num_splits: split each context into that many key ranges (decode steps
    only); None chooses: split long contexts when there are too few programs
    to fill the GPU. pack_heads=False: one query head per program, and
    tile_keys: keys a tile walks per trip instead of tile_options' choice (both
    for comparison, in notebook 08)."""
    num_heads, head_dim = q.shape[1], q.shape[2]
    check_cache(q[:0], k_cache, v_cache, 0)
    if k_cache.shape[0] % block_size:
        raise ValueError(
            f"cache of {k_cache.shape[0]} rows is not whole blocks of {block_size}")
    if max_query_len is None:
        max_query_len = int((cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max())
    opts = launch_options(q, k_cache, max_query_len, pack_heads, sequences=len(seq_lens))
    if tile_keys:
        opts = dict(opts, BLOCK_N=tile_keys)
    num_splits = num_splits or choose_splits(
        len(seq_lens) * (num_heads // opts["HEADS"]), block_tables.shape[1] * block_size,
        max_query_len, multiprocessors(q.device))
    args = (q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables, block_size)
    if num_splits > 1:
        return split_kv(*args, num_splits, max_query_len, opts)
    out = torch.empty_like(q)
    grid = (*tile_grid(opts, max_query_len, num_heads), len(seq_lens))
    _paged_attention_kernel[grid](
        q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_tables,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1),
        out.stride(0), out.stride(1),
        block_tables.stride(0), block_size, head_dim ** -0.5, **opts,
    )
    return out
# ANCHOR_END: wrapper


# ANCHOR: tiles_wrapper
def query_tiles(cu_seqlens_q, queries_per_tile, num_tiles):
    """(sequence, tile) of each of num_tiles programs: sequence s's queries in
    tiles of queries_per_tile, one after another; -1 for programs past the
    last. Torch operations on the GPU, with no value read back: a CUDA graph
    can hold them."""
    query_lens = cu_seqlens_q[1:] - cu_seqlens_q[:-1]
    tiles = (query_lens + queries_per_tile - 1) // queries_per_tile
    ends = torch.cumsum(tiles, 0)
    program = torch.arange(num_tiles, device=ends.device, dtype=ends.dtype)
    seq = torch.searchsorted(ends, program, right=True)
    inside = seq < len(query_lens)
    seq = seq.clamp(max=len(query_lens) - 1)
    block = program - (ends[seq] - tiles[seq])
    return torch.where(inside, seq, -1).to(torch.int32), block.to(torch.int32)


def paged_attention_tiles(q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables,
                          block_size, max_query_len, tiles=None):
    """paged_attention for a step replayed from a CUDA graph, whose grid is fixed
    when it is captured: max_query_len is the most queries any sequence may
    bring, and the grid has a program for every tile that N queries over S
    sequences can need (N / queries_per_tile + S); the tiles past the step's
    own exit at once. Sequences past the step's own carry no queries, and
    query rows past the last sequence's are never written. tiles: a dict
    that keeps the step's tile list for the next layer's call."""
    num_heads, head_dim = q.shape[1], q.shape[2]
    check_cache(q[:0], k_cache, v_cache, 0)
    if k_cache.shape[0] % block_size:
        raise ValueError(
            f"cache of {k_cache.shape[0]} rows is not whole blocks of {block_size}")
    opts = launch_options(q, k_cache, max_query_len)
    queries_per_tile = opts["BLOCK_M"] // opts["HEADS"]
    num_tiles = triton.cdiv(q.shape[0], queries_per_tile) + len(seq_lens)
    tiles = {} if tiles is None else tiles
    if (queries_per_tile, num_tiles) not in tiles:
        tiles[queries_per_tile, num_tiles] = query_tiles(cu_seqlens_q, queries_per_tile,
                                                         num_tiles)
    tile_seqs, tile_blocks = tiles[queries_per_tile, num_tiles]
    out = torch.empty_like(q)
    _paged_attention_tiles_kernel[(num_tiles, num_heads // opts["HEADS"])](
        q, k_cache, v_cache, out, cu_seqlens_q, seq_lens, block_tables,
        tile_seqs, tile_blocks,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1),
        out.stride(0), out.stride(1),
        block_tables.stride(0), block_size, head_dim ** -0.5, **opts,
    )
    return out
# ANCHOR_END: tiles_wrapper


def tiles_of_one_step():
    """paged_attention_tiles with a tile list of its own, for one step: its first
    layer makes the list, every other layer reads it (minicb/attention.py)."""
    return functools.partial(paged_attention_tiles, tiles={})


# ANCHOR: split_kv
def split_kv(q, k_cache, v_cache, cu_seqlens_q, seq_lens, block_tables, block_size,
             num_splits, max_query_len, opts):
    queries_per_tile = opts["BLOCK_M"] // opts["HEADS"]
    if max_query_len > queries_per_tile:
        raise ValueError(
            f"split-KV serves decode-like steps; {max_query_len} queries in one "
            f"sequence is more than one tile holds ({queries_per_tile})")
    num_heads, head_dim = q.shape[1], q.shape[2]
    max_context = block_tables.shape[1] * block_size
    split_len = (triton.cdiv(triton.cdiv(max_context, num_splits), opts["BLOCK_N"])
                 * opts["BLOCK_N"])
    # [splits, N, H, d]
    parts = torch.empty((num_splits, *q.shape), dtype=torch.float32, device=q.device)
    lse = torch.empty((num_splits, q.shape[0], num_heads), dtype=torch.float32,
                      device=q.device)
    grid = (num_splits, num_heads // opts["HEADS"], len(seq_lens))
    _paged_attention_split_kernel[grid](
        q, k_cache, v_cache, parts, lse, cu_seqlens_q, seq_lens, block_tables,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1),
        parts.stride(1), parts.stride(2),
        parts.stride(0), lse.stride(0), lse.stride(1), block_tables.stride(0),
        block_size, split_len, head_dim ** -0.5, **opts,
    )
    return combine_splits(parts, lse, q.dtype)
# ANCHOR_END: split_kv


# ANCHOR: combine
def combine_splits(parts, lse, dtype):
    """parts [splits, N, H, d]: each split's softmax-weighted V over its own
    keys; lse [splits, N, H]: the log of each split's softmax denominator
    (-inf where it saw no key). Returns the attention over all keys [N, H, d]."""
    num_splits, num_tokens, num_heads, head_dim = parts.shape
    if lse.shape != parts.shape[:3]:
        raise ValueError(
            f"lse {tuple(lse.shape)} does not match parts {tuple(parts.shape)}")
    if parts.stride(-1) != 1 or lse.stride(-1) != 1:
        raise ValueError("the last axis of parts and of lse must be contiguous")
    out = torch.empty((num_tokens, num_heads, head_dim), dtype=dtype,
                      device=parts.device)
    _combine_splits_kernel[(num_tokens, num_heads)](
        parts, lse, out, num_splits,
        parts.stride(0), parts.stride(1), parts.stride(2), lse.stride(0), lse.stride(1),
        out.stride(0), out.stride(1), HEAD_DIM=head_dim,
        BLOCK_D=triton.next_power_of_2(head_dim),
        BLOCK_S=triton.next_power_of_2(num_splits),
    )
    return out
# ANCHOR_END: combine


# ANCHOR: choose_splits
# A split walks at least this many keys (the combine's extra pass must pay off)
# and a context is cut into at most this many.
MIN_SPLIT_KEYS, MAX_SPLITS = 256, 32


def choose_splits(programs, max_context, max_query_len, processors) -> int:
    """How many key ranges to cut each context into, for a decode step whose
    ``programs`` (one per sequence and KV head) would leave some of the GPU's
    ``processors`` (streaming multiprocessors) with fewer than two: enough
    splits for two programs on each, at most one per MIN_SPLIT_KEYS keys and
    MAX_SPLITS in all. Batch 1 splits most; a full batch not at all."""
    if max_query_len > 1 or fills_the_gpu(programs, processors):
        return 1
    wanted = triton.cdiv(2 * processors, programs)
    return max(1, min(MAX_SPLITS, wanted, max_context // MIN_SPLIT_KEYS))
# ANCHOR_END: choose_splits

