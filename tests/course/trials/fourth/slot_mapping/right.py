"""Right, but built block segment by block segment: for each logical block the range
touches, one contiguous run of rows is appended (a range), instead of a division and a
modulo per position."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    size = self.block_size
    table = self.block_tables[request]
    rows: list[int] = []
    position, end = start, start + count
    while position < end:
        logical, offset = divmod(position, size)
        run = min(size - offset, end - position)       # tokens of this range in this block
        base = table[logical] * size + offset
        rows.extend(range(base, base + run))
        position += run
    return rows
