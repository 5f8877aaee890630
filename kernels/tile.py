"""The causal tile every attention kernel is built from.

A program computes one tile of output rows. A row is a (query, head) pair:
the tile holds BLOCK_M // HEADS queries of one sequence, each with the HEADS
query heads that share one KV head, so every block of K and V the program
loads serves all of its rows. It walks the keys in blocks of BLOCK_N with
online softmax (``online_softmax.attend_block``) and stops after the tile's
last query: no query sees a key after its own (causality).

Kernels differ only in where a sequence's keys are. In stages 1-4 they lie
in consecutive cache rows: key j is row j (``causal_tile``). Stage 5 builds
its paged tile from the same pieces, with a block-table lookup in between.
"""
import triton
import triton.language as tl

from .online_softmax import attend_block, empty_rows, finish_rows


# ANCHOR: pieces
@triton.jit
def tile_queries(Q, stride_qt, stride_qh, m_block, num_queries, GROUP: tl.constexpr,
                 HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
                 BLOCK_M: tl.constexpr):
    """The tile's rows: queries m_block * BLOCK_Q ..., each with query heads
    program_id(1) * HEADS .... Returns q [BLOCK_M, BLOCK_D], each row's query
    and head, which rows are real, and the one KV head all rows read."""
    BLOCK_Q = BLOCK_M // HEADS                        # queries per tile
    row = tl.arange(0, BLOCK_M)
    query = m_block * BLOCK_Q + row // HEADS          # row -> (query, head)
    head = tl.program_id(1) * HEADS + row % HEADS
    row_ok = (row < BLOCK_Q * HEADS) & (query < num_queries)
    offs_d = tl.arange(0, BLOCK_D)
    q = tl.load(
        Q + query[:, None] * stride_qt + head[:, None] * stride_qh + offs_d[None, :],
        mask=row_ok[:, None] & (offs_d[None, :] < HEAD_DIM), other=0.0)
    return q, query, head, row_ok, tl.program_id(1) * HEADS // GROUP


@triton.jit
def key_range(m_block, num_queries, context_len, first_key, key_end,
              HEADS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """The keys the tile walks: from first_key's block up to its last query's column."""
    last_query_column = context_len - num_queries + (m_block + 1) * (BLOCK_M // HEADS)
    return (first_key // BLOCK_N) * BLOCK_N, tl.minimum(key_end, last_query_column)


@triton.jit
def attend_keys(q, query, K, V, rows, keys, kv_head, stride_kt, stride_kh,
                num_queries, context_len, first_key, key_end, m_i, l_i, acc, scale,
                HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, PRECISION: tl.constexpr):
    """One block of keys (columns ``keys`` of the context, stored at cache
    ``rows``): load its K and V once for every row of the tile, hide the
    keys out of range or after a row's query, and fold it into the softmax."""
    offs_d = tl.arange(0, BLOCK_D)
    # In 64 bits: in a cache of more than 2**31 values (a large pool of blocks,
    # or slots), row * stride_kt would wrap around in 32.
    rows = rows.to(tl.int64)
    kv_off = rows[:, None] * stride_kt + kv_head * stride_kh + offs_d[None, :]
    kv_ok = (keys[:, None] < key_end) & (offs_d[None, :] < HEAD_DIM)
    k = tl.load(K + kv_off, mask=kv_ok, other=0.0)
    v = tl.load(V + kv_off, mask=kv_ok, other=0.0)
    # each row's query column in the cache
    q_column = context_len - num_queries + query
    visible = ((keys[None, :] >= first_key) & (keys[None, :] < key_end)
               & (keys[None, :] <= q_column[:, None]))
    return attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION)


@triton.jit
def store_rows(O, acc, l_i, query, head, row_ok, stride_ot, stride_oh,
               HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_d = tl.arange(0, BLOCK_D)
    tl.store(
        O + query[:, None] * stride_ot + head[:, None] * stride_oh + offs_d[None, :],
        finish_rows(acc, l_i).to(O.dtype.element_ty),
        mask=row_ok[:, None] & (offs_d[None, :] < HEAD_DIM))
# ANCHOR_END: pieces


# ANCHOR: tile
@triton.jit
def causal_tile(
    # one sequence: q/o [Lq, H, d]; k/v cache [T, KVH, d]
    Q, K, V, O,
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
    m_block, num_queries, context_len, first_key, key_end, scale,
    GROUP: tl.constexpr,              # query heads per KV head (GQA)
    HEADS: tl.constexpr,              # query heads per program, all of one KV head
    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """The tile over keys [first_key, key_end) of a context_len-token cache
    whose key j is cache row j."""
    q, query, head, row_ok, kv_head = tile_queries(
        Q, stride_qt, stride_qh, m_block, num_queries,
        GROUP, HEADS, HEAD_DIM, BLOCK_D, BLOCK_M)
    m_i, l_i, acc = empty_rows(BLOCK_M, BLOCK_D)
    start_key, stop_key = key_range(m_block, num_queries, context_len, first_key,
                                    key_end, HEADS, BLOCK_M, BLOCK_N)
    for start in range(start_key, stop_key, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        m_i, l_i, acc = attend_keys(
            q, query, K, V, keys, keys, kv_head, stride_kt, stride_kh,
            num_queries, context_len, first_key, key_end, m_i, l_i, acc, scale,
            HEAD_DIM, BLOCK_D, PRECISION)
    store_rows(O, acc, l_i, query, head, row_ok, stride_ot, stride_oh,
               HEAD_DIM, BLOCK_D)
# ANCHOR_END: tile
