"""Right, block run by block run instead of token by token: for each block the range touches,
it looks the block up once and extends the result by the range of rows inside it."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1."""
    table, size = self.block_tables[request], self.block_size
    rows: list[int] = []
    position, end = start, start + count
    while position < end:
        logical, offset = divmod(position, size)
        run = min(size - offset, end - position)        # tokens left in this block
        base = table[logical] * size + offset
        rows.extend(range(base, base + run))
        position += run
    return rows
