"""Right: masks the table read by block index (only the cdiv(context_len, block_size) blocks
the sequence owns) rather than by key position, so keys just past the context in its last
block still read that block's entry (harmlessly); offsets come from keys - block * block_size."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    logical = keys // block_size
    owned = (context_len + block_size - 1) // block_size       # the sequence's blocks
    physical = tl.load(BLOCK_TABLE + logical, mask=logical < owned, other=0)
    return physical * block_size + (keys - logical * block_size)
