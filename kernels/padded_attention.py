"""Stage 2: attention over a left-padded batch.

Every row of the batch is padded on the left so all rows end at the same
column; row b's first pad_lens[b] cache columns hold padding. The kernel is
stage 1's with one more program axis (the batch row) and one more mask term:
keys left of the row's padding boundary are invisible. Query rows that are
themselves padding see nothing and produce zeros.
"""
import torch
import triton
import triton.language as tl

from .contiguous_attention import _check_cache
from .online_softmax import attend_block, finish_rows, launch_options


# ANCHOR: kernel
@triton.jit
def _padded_attention_kernel(
    Q, K, V, O, PAD_LENS,             # q/o [B, Lq, H, d]; k/v cache [B, T, KVH, d]; pad_lens [B]
    stride_qb, stride_qt, stride_qh, stride_kb, stride_kt, stride_kh,
    stride_ob, stride_ot, stride_oh,
    num_queries, context_len, scale,
    GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
):
    row = tl.program_id(2)
    head = tl.program_id(1)
    kv_head = head // GROUP
    pad = tl.load(PAD_LENS + row)
    Q += row * stride_qb
    K += row * stride_kb
    V += row * stride_kb
    O += row * stride_ob
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d[None, :] < HEAD_DIM
    q_pos = context_len - num_queries + offs_m
    q = tl.load(Q + offs_m[:, None] * stride_qt + head * stride_qh + offs_d[None, :],
                mask=(offs_m[:, None] < num_queries) & d_ok, other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    last_key = tl.minimum(context_len, context_len - num_queries + (tl.program_id(0) + 1) * BLOCK_M)
    # Skip the padding: start at the block that holds the row's first real key.
    for start in range((pad // BLOCK_N) * BLOCK_N, last_key, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        kv_off = offs_n[:, None] * stride_kt + kv_head * stride_kh + offs_d[None, :]
        kv_ok = (offs_n[:, None] < context_len) & d_ok
        k = tl.load(K + kv_off, mask=kv_ok, other=0.0)
        v = tl.load(V + kv_off, mask=kv_ok, other=0.0)
        real = (offs_n[None, :] >= pad) & (offs_n[None, :] < context_len)
        visible = real & (offs_n[None, :] <= q_pos[:, None])
        m_i, l_i, acc = attend_block(q, k, v, visible, m_i, l_i, acc, scale, PRECISION)

    out = finish_rows(acc, l_i)
    tl.store(O + offs_m[:, None] * stride_ot + head * stride_oh + offs_d[None, :],
             out.to(O.dtype.element_ty), mask=(offs_m[:, None] < num_queries) & d_ok)
# ANCHOR_END: kernel


# ANCHOR: wrapper
def padded_attention(q, k_cache, v_cache, context_len, pad_lens):
    """q [B, Lq, H, d]; k/v cache [B, T, KVH, d]; pad_lens [B] int tensor.
    Returns [B, Lq, H, d] (zeros for query rows that are padding)."""
    batch, num_queries, num_heads, head_dim = q.shape
    _check_cache(q, k_cache, v_cache, context_len)
    if pad_lens.shape != (batch,):
        raise ValueError(f"pad_lens must have shape ({batch},), got {tuple(pad_lens.shape)}")
    opts = launch_options(q, head_dim, num_queries)
    out = torch.empty_like(q)
    grid = (triton.cdiv(num_queries, opts["BLOCK_M"]), num_heads, batch)
    _padded_attention_kernel[grid](
        q, k_cache, v_cache, out, pad_lens.to(device=q.device, dtype=torch.int32),
        q.stride(0), q.stride(1), q.stride(2), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        num_queries, context_len, head_dim ** -0.5,
        GROUP=num_heads // k_cache.shape[-2], **opts,
    )
    return out
# ANCHOR_END: wrapper
