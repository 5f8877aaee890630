"""Misconception: keys at or past context_len are masked out by the caller anyway, so the table
can be read for every key of the tile unmasked. The last tile reads table entries past the
sequence's blocks: context_len 20, block size 4, the 16-key tile 16..31 reads entries 5-7 of 5."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """Each key's row in the cache pool, through the sequence's block table."""
    block = tl.load(BLOCK_TABLE + keys // block_size)
    return block * block_size + keys % block_size
