"""Misconception: block sizes are powers of two, so the offset in a block is keys & (size-1)
(the usual kernel bit trick). Right for 1, 16, 32; with block_size 12, key 13 is at offset 1,
but 13 & 11 = 9, so keys of every block after the first are read from the wrong rows."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    block = tl.load(BLOCK_TABLE + keys // block_size, mask=keys < context_len, other=0)
    return block * block_size + (keys & (block_size - 1))
