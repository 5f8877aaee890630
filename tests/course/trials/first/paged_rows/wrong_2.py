"""Misconception: a block-table entry is the block's first cache row, so a key's row is
entry + offset. Right only for block_size 1; with block_size 16, key 17 in table [3, 5]
gives row 5 + 1 = 6 instead of 5 * 16 + 1 = 81."""
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
    block_start = tl.load(BLOCK_TABLE + keys // block_size, mask=keys < context_len, other=0)
    return block_start + keys % block_size
