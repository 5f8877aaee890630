"""Misconception: "keys past context_len are masked out by the caller
anyway, so their rows can be anything": the table is loaded without a mask.
The rows of those keys are indeed never used, but computing them reads
BLOCK_TABLE[j // block_size] for keys up to the end of the tile, past the
sequence's last block: into the next sequence's table row, or, for the last
sequence when its table row is exactly as wide as its blocks, past the end
of the block_tables tensor (an illegal address on a GPU, an out-of-bounds
read in the interpreter). The contract says those positions must not read
the table beyond the sequence's blocks.

Concrete input: one sequence, context_len 20, block_size 8, block_tables
[[7, 3, 9]] (three entries, exactly its blocks), fp32 decode (BLOCK_N 16):
the second key tile, keys 16..31, reads table entry 3 for keys 24..31, one
past the end of the tensor.
"""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    block = tl.load(BLOCK_TABLE + keys // block_size)
    return block * block_size + keys % block_size
