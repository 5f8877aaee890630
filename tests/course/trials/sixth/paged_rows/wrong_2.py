"""Misconception: context_len is the last position, so the table load is masked with
keys <= context_len. One key too many: when context_len is a multiple of block_size inside a
tile (context_len 8, block size 4, a 16-key tile), key 8 reads table entry 2 of a 2-block table."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """Each key's row in the cache pool, through the sequence's block table."""
    block = tl.load(BLOCK_TABLE + keys // block_size, mask=keys <= context_len, other=0)
    return block * block_size + keys % block_size
