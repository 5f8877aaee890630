"""Misconception: a tile of keys lies inside one block (true when BLOCK_N <= block_size, e.g. fp32
tiles of 16 keys and blocks of 16), so one table entry, the tile's first key's, serves every key.
Goes wrong: fp16 tiles of 32 keys with blocks of 16 (or block_size 1): keys 16..31 read rows of the wrong block."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """Each key's row in the cache pool."""
    first = tl.min(keys, axis=0)
    block = tl.load(BLOCK_TABLE + first // block_size)
    return block * block_size + keys % block_size
