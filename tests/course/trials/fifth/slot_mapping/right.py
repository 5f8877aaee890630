"""Right: walks the block table one logical block at a time, adding each block's run of
consecutive rows (a range clipped to the requested positions), rather than computing
table[p // size] * size + p % size for every position."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    size, table = self.block_size, self.block_tables[request]
    rows, position, end = [], start, start + count
    while position < end:
        logical, offset = divmod(position, size)
        run = min(size - offset, end - position)         # positions left in this block
        first = table[logical] * size + offset
        rows.extend(range(first, first + run))
        position += run
    return rows
