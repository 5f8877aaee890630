"""Correct, written differently: walks the positions one block at a time and appends each block's run of
rows as a range, instead of computing block and offset for every position.
"""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1.
    Position p lives in logical block p // self.block_size, which is physical
    block ``self.block_tables[request][p // self.block_size]``, at offset
    p % self.block_size.
    """
    table, size = self.block_tables[request], self.block_size
    rows, p, end = [], start, start + count
    while p < end:
        logical, offset = divmod(p, size)
        run = min(size - offset, end - p)          # positions left in this block
        base = table[logical] * size + offset
        rows.extend(range(base, base + run))
        p += run
    return rows
