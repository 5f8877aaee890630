"""Correct, written differently: no per-token division. It takes the physical blocks from the
one holding `start` onward, lays out all their rows (block * block_size + 0..block_size-1)
flat, and slices out `count` rows starting at start's offset in its block."""
import itertools


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1.
    Position p lives in logical block p // self.block_size, which is physical
    block ``self.block_tables[request][p // self.block_size]``, at offset
    p % self.block_size.
    """
    if count <= 0:
        return []
    size = self.block_size
    first_block, offset = divmod(start, size)
    last_block = (start + count - 1) // size
    blocks = self.block_tables[request][first_block:last_block + 1]
    rows = itertools.chain.from_iterable(
        range(block * size, (block + 1) * size) for block in blocks)
    return list(itertools.islice(rows, offset, offset + count))
