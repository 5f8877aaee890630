"""Chapter 5: where a paged sequence's keys live (a Triton function).

Stage 5's cache is a pool of blocks of ``block_size`` token rows; a
sequence's block table lists its blocks in order. The paged kernel walks a
sequence's keys a tile at a time and asks this function where each key's
K and V are. The check runs the paged kernel with yours inside it, in Triton's
interpreter, against the naive reference, on blocks shuffled through the pool.
Check: ``python -m minicb check paged_rows``.
"""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    """BLOCK_TABLE: a pointer to this sequence's block table (int32 block
    numbers); keys [N]: key positions in the sequence (0 is its first token).
    Return [N]: each key's row in the cache pool. Positions at or past
    context_len are masked out by the caller, but must not read the table
    beyond the sequence's blocks.
    """
    raise NotImplementedError
