"""Right, but the table index is clamped to the sequence's last block (min(key, context_len-1))
as well as masked, and the offset is key - block_index * block_size rather than a modulo."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """Each key's row in the cache pool, through the sequence's block table."""
    last_key = tl.maximum(context_len - 1, 0)
    logical = tl.minimum(keys, last_key) // block_size        # never past the last block
    physical = tl.load(BLOCK_TABLE + logical, mask=keys < context_len, other=0)
    offset = keys - (keys // block_size) * block_size
    return physical * block_size + offset
