"""Stage 1: attention over one sequence's contiguous KV cache.

The same kernel serves prefill (Lq = prompt length, causal) and decode
(Lq = 1, the new token sees the whole context). One program handles BLOCK_M
queries of one head and walks the cache in blocks of BLOCK_N keys.
"""
import torch
import triton
import triton.language as tl

from .online_softmax import STEP_VARYING, attend_block, finish_rows, launch_options


# ANCHOR: tile
@triton.jit
def causal_attention_tile(
    Q, K, V, O,                       # one sequence: q/o [Lq, H, d]; k/v cache [T, KVH, d]
    BLOCK_TABLE, block_size,          # stage 5 only (PAGED): where each block of keys lives
    LSE, stride_lse,                  # stage 5 split-KV only (STORE_LSE): each row's log-sum-exp
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
    m_block, num_queries, context_len, first_key, key_end, scale,
    GROUP: tl.constexpr,              # query heads per KV head (GQA)
    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr, PAGED: tl.constexpr, STORE_LSE: tl.constexpr,
):
    """Queries m_block * BLOCK_M ... of head program_id(1), attending causally
    over the keys in columns [first_key, key_end) of a context_len-token cache."""
    head = tl.program_id(1)
    kv_head = head // GROUP
    offs_m = m_block * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d[None, :] < HEAD_DIM
    q_pos = context_len - num_queries + offs_m        # each query's column in the cache
    q = tl.load(Q + offs_m[:, None] * stride_qt + head * stride_qh + offs_d[None, :],
                mask=(offs_m[:, None] < num_queries) & d_ok, other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    # Causality: no query of this tile looks past the tile's last query.
    last_key = tl.minimum(key_end, context_len - num_queries + (m_block + 1) * BLOCK_M)
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
    tl.store(O + offs_m[:, None] * stride_ot + head * stride_oh + offs_d[None, :],
             out.to(O.dtype.element_ty), mask=(offs_m[:, None] < num_queries) & d_ok)
    if STORE_LSE:                     # log of the softmax denominator; -inf (via m_i) where no key was seen
        lse = m_i + tl.log(tl.maximum(l_i, 1e-30))
        tl.store(LSE + offs_m * stride_lse + head, lse, mask=offs_m < num_queries)
# ANCHOR_END: tile


# ANCHOR: kernel
@triton.jit(do_not_specialize=STEP_VARYING)
def _contiguous_attention_kernel(
    Q, K, V, O, stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
    num_queries, context_len, scale,
    GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
):
    # One sequence whose keys all count: the tile starts at key 0.
    causal_attention_tile(Q, K, V, O, Q, 0, Q, 0,     # no block table, no split: unused pointers
                          stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
                          tl.program_id(0), num_queries, context_len, 0, context_len, scale,
                          GROUP, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION, False, False)
# ANCHOR_END: kernel


# ANCHOR: wrapper
def contiguous_attention(q, k_cache, v_cache, context_len):
    """q [Lq, H, d]; k/v cache [T, KVH, d] holding context_len tokens, the
    last Lq of which are the queries' own. Returns [Lq, H, d]."""
    num_queries, num_heads, head_dim = q.shape
    check_cache(q, k_cache, v_cache, context_len)
    opts = launch_options(q, head_dim, num_queries)
    out = torch.empty_like(q)
    grid = (triton.cdiv(num_queries, opts["BLOCK_M"]), num_heads)
    _contiguous_attention_kernel[grid](
        q, k_cache, v_cache, out,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), out.stride(0), out.stride(1),
        num_queries, context_len, head_dim ** -0.5,
        GROUP=num_heads // k_cache.shape[-2], **opts,
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
