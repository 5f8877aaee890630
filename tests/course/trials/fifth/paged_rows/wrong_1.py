"""Misconception: the caller masks keys at or past context_len, so the table can be read
for every key of the tile. Output is right, but a tile running past the context reads
entries beyond the sequence's blocks (context 5, blocks of 4, tile of 16 keys reads entries 2, 3)."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    block = tl.load(BLOCK_TABLE + keys // block_size)
    return block * block_size + keys % block_size
