"""Right: the block index is first made safe and then loaded, instead of
loading with a mask: keys at or past context_len are pointed at table entry
0 (which the masked load then does not even read), and the offset inside the
block is found by subtraction (key - block_index * block_size) rather than
with a modulo. Rows are computed in 64 bits, so a large pool cannot wrap
around."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    inside = keys < context_len
    index = tl.where(inside, keys // block_size, 0)
    offset = keys - (keys // block_size) * block_size
    block = tl.load(BLOCK_TABLE + index, mask=inside, other=0)
    return block.to(tl.int64) * block_size + offset
