"""Misconception: the caller masks keys at or past context_len, so the table lookup needs no mask.
The answer is right, but the last tile's keys past context_len read block-table entries past the
sequence's blocks (e.g. context_len 17, block_size 1, BLOCK_N 32: entries 17..31), off the table's end.
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
    block = tl.load(BLOCK_TABLE + keys // block_size)
    return block * block_size + keys % block_size
