"""How many bytes an attention launch moves: what must cross HBM, and what its grid reads.

A decode step does about one multiply-add per byte of K/V it loads, so its
time is set by bytes. The yardstick is the bytes that *must* cross HBM: every
query and output once, every cached token's K and V once per KV head, and
the block-table entries. A launch's grid may read more. A program that
serves one query head reads its KV head's keys and values by itself, so the
GROUP query heads that share a KV head read it GROUP times; packing them into
one program (``launch_options``) reads it once.

Achieved bandwidth is reported as required bytes / time: reading something
twice makes a kernel slower, never "faster".
"""
from math import prod

import triton

from .online_softmax import tile_options


# ANCHOR: bytes
def attention_bytes(query_lens, seq_lens, num_heads, num_kv_heads, head_dim, dtype,
                    block_size=None, pack_heads=True, num_splits=1) -> dict:
    """query_lens[s] new tokens of sequence s attend over its seq_lens[s]
    cached tokens (stage 4's ragged launch; block_size: stage 5's paged one).
    Returns {"required": bytes that must cross HBM, "grid": bytes the
    launch's programs read and write}, as the kernels tile the work."""
    opts = tile_options(dtype, head_dim, num_heads // num_kv_heads,
                        max(query_lens), pack_heads)
    queries_per_tile, head_programs = (opts["BLOCK_M"] // opts["HEADS"],
                                       num_heads // opts["HEADS"])
    kv_token = 2 * head_dim * dtype.itemsize  # one token's K and V, one KV head
    table_entry = 4 if block_size else 0      # int32, one per block of keys

    def table(keys):
        return table_entry * triton.cdiv(keys, block_size or 1)

    # the output is as large
    q = sum(query_lens) * num_heads * head_dim * dtype.itemsize
    required = 2 * q + sum(num_kv_heads * c * kv_token + table(c) for c in seq_lens)
    grid = num_splits * q + q  # each split's programs load the queries again
    for new, context in zip(query_lens, seq_lens):
        for tile in range(triton.cdiv(new, queries_per_tile)):
            # Causal: a tile walks key blocks up to its last query's position, and
            # loads every key of the last block it starts that the sequence has.
            # Each head program reads them, and the block-table entries that
            # locate them.
            last = context - new + (tile + 1) * queries_per_tile
            keys = min(context, triton.cdiv(last, opts["BLOCK_N"]) * opts["BLOCK_N"])
            grid += head_programs * (keys * kv_token + table(keys))
    # each range's fp32 output and log-sum-exp, written, then read by the combine
    if num_splits > 1:
        grid += 2 * prod((num_splits, sum(query_lens), num_heads, head_dim + 1)) * 4
    return dict(required=required, grid=grid)
# ANCHOR_END: bytes
