"""Correct, written differently: masks the table load by logical block (< cdiv(context_len, block_size))
rather than by key, and takes the offset as keys - logical * block_size instead of keys % block_size.
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
    logical = keys // block_size
    num_blocks = (context_len + block_size - 1) // block_size
    physical = tl.load(BLOCK_TABLE + logical, mask=logical < num_blocks, other=0)
    return physical * block_size + (keys - logical * block_size)
