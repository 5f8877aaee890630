"""Misconception: "a sequence's blocks follow one another in the pool, so the
table's first entry is all I need": key j is placed at row
BLOCK_TABLE[0] * block_size + j, as if the sequence's blocks were allocated
consecutively. A fresh allocator hands out consecutive blocks to a request
that is admitted alone, so simple runs pass, but once blocks have been freed
and reused (other requests finished, preemption, prefix caching, the check's
blocks shuffled through the pool) a sequence's second block is anywhere.

Concrete input: block_size 16, context_len 40, block table [2, 7, 4]: key 16
lives at row 7*16 = 112; this version reads row 2*16 + 16 = 48 (block 3).
"""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    first = tl.load(BLOCK_TABLE)          # the sequence has at least one block
    return first * block_size + keys
