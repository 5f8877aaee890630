"""Misconception: block sizes are powers of two, so the offset in a block is keys & (block_size - 1).
Right for block sizes 1, 16, 32; wrong for block_size 12: key 13 gets offset 13 & 11 = 9, not 1.
"""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """BLOCK_TABLE: a pointer to this sequence's block table (int32 block
    numbers); keys [N]: key positions in the sequence (0 is its first token).
    Return [N]: each key's row in the cache pool. Positions at or past
    context_len are masked out by the caller, but must not read the table
    beyond the sequence's blocks.
    """
    block = tl.load(BLOCK_TABLE + keys // block_size, mask=keys < context_len, other=0)
    return block * block_size + (keys & (block_size - 1))
