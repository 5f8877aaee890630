"""Misconception: "a sequence owns context_len // block_size blocks", so the
guard on the table read is written per block: entry i is read only when
i < context_len // block_size. That is the number of *full* blocks; the last,
partly filled block is left out whenever context_len is not a multiple of
block_size, its keys read no entry, fall back to block 0 and so get block
0's rows: the newest keys of the sequence are attended with another block's
K and V (the engine's block 0, or whoever owns it).

Concrete input: block_size 16, context_len 20, block table [5, 9]: keys 16..19
must map to rows 9*16+0..3 = 144..147; this version maps them to rows 0..3.
With context lengths that are exact multiples of the block size it is right.
"""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    index = keys // block_size
    num_blocks = context_len // block_size
    block = tl.load(BLOCK_TABLE + index, mask=index < num_blocks, other=0)
    return block * block_size + keys % block_size
