"""Correct, written differently: the load is masked per block (a key's logical block starts
before context_len) rather than per key, so keys past the end inside the last block reuse that
block's entry; the offset is keys - logical * block_size instead of keys % block_size."""
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
    block_start = logical * block_size
    # the sequence owns blocks 0 .. cdiv(context_len, block_size) - 1
    owned = block_start < context_len
    physical = tl.load(BLOCK_TABLE + logical, mask=owned, other=0)
    return physical * block_size + (keys - block_start)
