"""Right, but the block index is clamped into the sequence's blocks (keys past the end look
up its last block) instead of masking the load, so every read stays inside the table; rows
are built as a 64-bit block start plus offset computed with a subtraction, not a modulo."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    last_block = tl.maximum(context_len - 1, 0) // block_size      # the sequence's last block
    logical = tl.minimum(keys // block_size, last_block)
    physical = tl.load(BLOCK_TABLE + logical).to(tl.int64)
    return physical * block_size + (keys - (keys // block_size) * block_size)
