"""Stage 1: attention over one sequence's contiguous KV cache.

The same kernel serves prefill (Lq = prompt length, causal) and decode
(Lq = 1, the new token sees the whole context). One program handles a tile
of BLOCK_M rows, each a (query, head) pair: BLOCK_M // HEADS queries, each
with the HEADS query heads of one KV head. It walks the cache in blocks of
BLOCK_N keys, and each K/V block it loads serves every row.
"""
import torch
import triton
import triton.language as tl

from .online_softmax import STEP_VARYING, attend_block, finish_rows, launch_options, tile_grid


# ANCHOR: tile
@triton.jit
def causal_attention_tile(
    Q, K, V, O,                       # one sequence: q/o [Lq, H, d]; k/v cache [T, KVH, d]
    BLOCK_TABLE, block_size,          # stage 5 only (PAGED): where each block of keys lives
    LSE, stride_lse,                  # stage 5 split-KV only (STORE_LSE): each row's log-sum-exp
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
    m_block, num_queries, context_len, first_key, key_end, scale,
    GROUP: tl.constexpr,              # query heads per KV head (GQA)
    HEADS: tl.constexpr,              # query heads per program, all of one KV head
    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr, PAGED: tl.constexpr, STORE_LSE: tl.constexpr,
):
    """Rows of the tile are (query, head) pairs: queries m_block * BLOCK_Q ...,
    each with query heads program_id(1) * HEADS ..., attending causally over the
    keys in columns [first_key, key_end) of a context_len-token cache."""
    BLOCK_Q = BLOCK_M // HEADS                        # queries per tile
    row = tl.arange(0, BLOCK_M)
    query = m_block * BLOCK_Q + row // HEADS          # row -> (query, head)
    head = tl.program_id(1) * HEADS + row % HEADS
    kv_head = tl.program_id(1) * HEADS // GROUP       # the one KV head all rows read
    row_ok = (row < BLOCK_Q * HEADS) & (query < num_queries)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d[None, :] < HEAD_DIM
    q_pos = context_len - num_queries + query         # each row's query column in the cache
    q = tl.load(Q + query[:, None] * stride_qt + head[:, None] * stride_qh + offs_d[None, :],
                mask=row_ok[:, None] & d_ok, other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    # Causality: no query of this tile looks past the tile's last query.
    last_key = tl.minimum(key_end, context_len - num_queries + (m_block + 1) * BLOCK_Q)
    for start in range((first_key // BLOCK_N) * BLOCK_N, last_key, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        rows = offs_n                 # key j is cache row j ...
        if PAGED:                     # ... unless the cache is paged: row = its block's start + offset
            block = tl.load(BLOCK_TABLE + offs_n // block_size, mask=offs_n < context_len, other=0)
            rows = block * block_size + offs_n % block_size
        kv_off = rows[:, None] * stride_kt + kv_head * stride_kh + offs_d[None, :]
        kv_ok = (offs_n[:, None] < key_end) & d_ok
        k = tl.load(K + kv_off, mask=kv_ok, other=0.0)
        v = tl.load(V + kv_off, mask=kv_ok, other=0.0)
        in_range = (offs_n[None, :] >= first_key) & (offs_n[None, :] < key_end)
        visible = in_range & (offs_n[None, :] <= q_pos[:, None])
        m_i, l_i, acc = attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION)

    out = finish_rows(acc, l_i)
    tl.store(O + query[:, None] * stride_ot + head[:, None] * stride_oh + offs_d[None, :],
             out.to(O.dtype.element_ty), mask=row_ok[:, None] & d_ok)
    if STORE_LSE:                     # log of the softmax denominator; -inf (via m_i) where no key was seen
        lse = m_i + tl.log(tl.maximum(l_i, 1e-30))
        tl.store(LSE + query * stride_lse + head, lse, mask=row_ok)
# ANCHOR_END: tile


# ANCHOR: kernel
@triton.jit(do_not_specialize=STEP_VARYING)
def _contiguous_attention_kernel(
    Q, K, V, O, stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
    num_queries, context_len, scale,
    GROUP: tl.constexpr, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
):
    # One sequence whose keys all count: the tile starts at key 0.
    causal_attention_tile(Q, K, V, O, Q, 0, Q, 0,     # no block table, no split: unused pointers
                          stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
                          tl.program_id(0), num_queries, context_len, 0, context_len, scale,
                          GROUP, HEADS, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION, False, False)
# ANCHOR_END: kernel


# ANCHOR: wrapper
def contiguous_attention(q, k_cache, v_cache, context_len):
    """q [Lq, H, d]; k/v cache [T, KVH, d] holding context_len tokens, the
    last Lq of which are the queries' own. Returns [Lq, H, d]."""
    num_queries, num_heads, head_dim = q.shape
    check_cache(q, k_cache, v_cache, context_len)
    opts = launch_options(q, k_cache, num_queries)
    out = torch.empty_like(q)
    _contiguous_attention_kernel[tile_grid(opts, num_queries, num_heads)](
        q, k_cache, v_cache, out,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), out.stride(0), out.stride(1),
        num_queries, context_len, head_dim ** -0.5, **opts,
    )
    return out
# ANCHOR_END: wrapper


def check_cache(q, k_cache, v_cache, context_len):
    """Shape checks shared by the host wrappers; q [..., Lq, H, d], caches [..., T, KVH, d]."""
    if q.stride(-1) != 1 or k_cache.stride(-1) != 1 or v_cache.stride(-1) != 1:
        raise ValueError("the last (head_dim) axis of q and the caches must be contiguous")
    if k_cache.stride() != v_cache.stride():
        raise ValueError("k_cache and v_cache must share one layout")
    if q.shape[-2] % k_cache.shape[-2]:
        raise ValueError(f"{q.shape[-2]} query heads is not a multiple of {k_cache.shape[-2]} KV heads")
    if not q.shape[-3] <= context_len <= k_cache.shape[-3]:
        raise ValueError(f"context_len {context_len} must be within [{q.shape[-3]}, {k_cache.shape[-3]}]")
