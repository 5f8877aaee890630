"""Misconception: a tile of keys never straddles two blocks, so one table entry (the tile's first key's)
serves the whole tile. Right when block_size is a multiple of BLOCK_N (fp32: 16, block_size 16 or 32);
wrong for fp16 (BLOCK_N 32) at block_size 16, or block_size 1.
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
    first = tl.min(keys, axis=0)                  # the tile's first key: always < context_len
    block = tl.load(BLOCK_TABLE + first // block_size)
    return block * block_size + keys % block_size
