"""Misconception: the newest key sits at context_len, so mask with keys <= context_len.
One key too many: when context_len is a multiple of block_size (8 keys in blocks of 4), key 8
reads table entry 2, past the sequence's two blocks."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    block = tl.load(BLOCK_TABLE + keys // block_size, mask=keys <= context_len, other=0)
    return block * block_size + keys % block_size
