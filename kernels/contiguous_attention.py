"""Stage 1: attention over one sequence's contiguous KV cache.

The same kernel serves prefill (Lq = prompt length, causal) and decode
(Lq = 1, the new token sees the whole context). One program handles a tile
of BLOCK_M rows, each a (query, head) pair: BLOCK_M // HEADS queries, each
with the HEADS query heads of one KV head. It walks the cache in blocks of
BLOCK_N keys, and each K/V block it loads serves every row (``tile.py``).

The context's length is read from the GPU's memory: a CUDA graph replays a
kernel with the numbers it was captured with but reads memory afresh, so one
graph serves every decode step (chapter 8).
"""
import torch
import triton
import triton.language as tl

from .online_softmax import STEP_VARYING, check_cache, launch_options, tile_grid
from .tile import causal_tile


# ANCHOR: kernel
@triton.jit(do_not_specialize=STEP_VARYING)
def _contiguous_attention_kernel(
    Q, K, V, O, CONTEXT_LEN,
    stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
    num_queries, scale,
    GROUP: tl.constexpr, HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr,
):
    context_len = tl.load(CONTEXT_LEN)
    # One sequence whose keys all count: the tile starts at key 0.
    causal_tile(Q, K, V, O,
                stride_qt, stride_qh, stride_kt, stride_kh, stride_ot, stride_oh,
                tl.program_id(0), num_queries, context_len, 0, context_len, scale,
                GROUP, HEADS, HEAD_DIM, BLOCK_D, BLOCK_M, BLOCK_N, PRECISION)
# ANCHOR_END: kernel


# ANCHOR: wrapper
def contiguous_attention(q, k_cache, v_cache, context_len):
    """q [Lq, H, d]; k/v cache [T, KVH, d] holding context_len tokens, the
    last Lq of which are the queries' own. Returns [Lq, H, d]. context_len:
    an int, or a one-element int tensor on q's device (not read here)."""
    num_queries, num_heads, head_dim = q.shape
    if isinstance(context_len, int):
        check_cache(q, k_cache, v_cache, context_len)
        context_len = torch.full((1,), context_len, dtype=torch.int32, device=q.device)
    check_cache(q, k_cache, v_cache)
    opts = launch_options(q, k_cache, num_queries)
    out = torch.empty_like(q)
    _contiguous_attention_kernel[tile_grid(opts, num_queries, num_heads)](
        q, k_cache, v_cache, out, context_len,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1),
        out.stride(0), out.stride(1),
        num_queries, head_dim ** -0.5, **opts,
    )
    return out
# ANCHOR_END: wrapper
