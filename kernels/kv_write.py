"""Writing a step's new K/V into the cache through ``slot_mapping``.

Token i of the packed batch goes to cache row slot_mapping[i] (-1: skip).
The engine decides the rows: a slot's region in stage 4, a block's entries in
stage 5; the kernel only copies. One program copies one token's K and V.
"""
import triton
import triton.language as tl


# ANCHOR: kernel
@triton.jit
def _store_kv_kernel(K, V, K_CACHE, V_CACHE, SLOT_MAPPING,
                     stride_k, stride_v, stride_cache,
                     ROW: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(SLOT_MAPPING + token)
    offs = tl.arange(0, BLOCK)
    # ROW = kv_heads * head_dim values per token; a slot of -1 copies nothing.
    ok = offs < tl.where(slot >= 0, ROW, 0)
    tl.store(K_CACHE + slot * stride_cache + offs,
             tl.load(K + token * stride_k + offs, mask=ok), mask=ok)
    tl.store(V_CACHE + slot * stride_cache + offs,
             tl.load(V + token * stride_v + offs, mask=ok), mask=ok)
# ANCHOR_END: kernel


def store_kv_cache(k, v, k_cache, v_cache, slot_mapping):
    """k, v [N, KVH, d] -> rows slot_mapping [N] of k/v_cache [rows, KVH, d], in place."""
    for name, x in [("k", k), ("v", v), ("k_cache", k_cache), ("v_cache", v_cache)]:
        if x.stride(-1) != 1 or x.stride(-2) != x.shape[-1]:
            raise ValueError(f"{name}: each token's [kv_heads, head_dim] values must be contiguous")
    if k.shape[1:] != k_cache.shape[1:] or k_cache.stride() != v_cache.stride():
        raise ValueError(f"k {tuple(k.shape)} does not fit the cache {tuple(k_cache.shape)}")
    if slot_mapping.shape != (k.shape[0],):
        raise ValueError(f"slot_mapping must have shape ({k.shape[0]},), got {tuple(slot_mapping.shape)}")
    row = k.shape[1] * k.shape[2]
    _store_kv_kernel[(k.shape[0],)](k, v, k_cache, v_cache, slot_mapping, k.stride(0), v.stride(0),
                                    k_cache.stride(0), ROW=row, BLOCK=triton.next_power_of_2(row))
