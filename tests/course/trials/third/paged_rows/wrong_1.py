"""Misconception: the caller masks keys past context_len when it loads K and V, so the table load needs
no mask; it reads entries past the sequence's blocks (zeros in the engine's padded table, out of bounds past the
last row). Goes wrong: fp16 tiles of 32 keys, blocks of 16, context_len 40 -> keys 48..63 read entry 3 of a 3-block table."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """Each key's row in the cache pool."""
    block = tl.load(BLOCK_TABLE + keys // block_size)
    return block * block_size + keys % block_size
