"""Right, with a block-granular mask: the table is read only for logical blocks below
cdiv(context_len, block_size) (a key past context_len in the last block reuses that block's entry),
and the offset is keys - logical * block_size rather than keys % block_size."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """Each key's row in the cache pool."""
    logical = keys // block_size
    held = logical < tl.cdiv(context_len, block_size)           # the sequence's own blocks
    physical = tl.load(BLOCK_TABLE + logical, mask=held, other=0)
    return physical * block_size + (keys - logical * block_size)
