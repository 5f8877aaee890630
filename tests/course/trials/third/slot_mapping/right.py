"""Right, block by block instead of token by token: walks the logical blocks the span touches and
extends the result with one contiguous range of rows per block (no per-token division)."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1."""
    size, table = self.block_size, self.block_tables[request]
    rows, position, end = [], start, start + count
    while position < end:
        logical, offset = divmod(position, size)
        take = min(size - offset, end - position)        # rows left in this block, or in the span
        base = table[logical] * size
        rows.extend(range(base + offset, base + offset + take))
        position += take
    return rows
