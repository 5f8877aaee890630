"""Misconception: a tile of keys lies in one block (as in kernels where BLOCK_N == block_size),
so the table is read once, for the tile's first key. Right when block_size is a multiple of the
tile's BLOCK_N (16 or 32 with fp32 tiles of 16); wrong for block_size 1, 4 or 12."""
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
    first = tl.min(keys, axis=0)              # the tile's first key is always < context_len
    logical = first // block_size
    block = tl.load(BLOCK_TABLE + logical)
    return block * block_size + (keys - logical * block_size)
