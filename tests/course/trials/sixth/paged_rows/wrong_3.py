"""Misconception: block sizes are powers of two, so the offset in a block is keys & (block_size - 1).
Right for 1, 16, 32; wrong for any other block_size (the config allows any): block size 12, key 13
gets offset 13 & 11 = 9 instead of 1."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """Each key's row in the cache pool, through the sequence's block table."""
    block = tl.load(BLOCK_TABLE + keys // block_size, mask=keys < context_len, other=0)
    return block * block_size + (keys & (block_size - 1))
