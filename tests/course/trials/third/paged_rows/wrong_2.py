"""Misconception: the sequence's last block is number context_len // block_size, so table entries up
to and including it may be read. When context_len is a multiple of block_size that entry is one past
the sequence's blocks: block_size 16, context_len 48, an fp16 tile over keys 32..63 reads entry 3 of a 3-block table."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """Each key's row in the cache pool."""
    logical = keys // block_size
    block = tl.load(BLOCK_TABLE + logical, mask=logical <= context_len // block_size, other=0)
    return block * block_size + keys % block_size
