"""Misconception: a tile of keys never crosses a block (true when block_size >= BLOCK_N, as
with blocks of 16 or 32 and fp32's 16-key tiles), so look up the tile's first block once and
count rows on from it. Wrong with blocks smaller than the tile: block_size 1, 4, or 16 in fp16 (32-key tiles)."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    first_key = tl.min(keys, 0)
    block = tl.load(BLOCK_TABLE + first_key // block_size)     # one lookup per tile
    return block * block_size + first_key % block_size + (keys - first_key)
