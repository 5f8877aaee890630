"""Misconception: guard the table load with keys <= context_len (the last position "counts").
Same attention output, but when context_len is a multiple of block_size (32 keys, block 16) the key
at position 32 reads table entry 2, one past the sequence's blocks (past the table for the widest)."""
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
    block = tl.load(BLOCK_TABLE + keys // block_size, mask=keys <= context_len, other=0)
    return block * block_size + keys % block_size
