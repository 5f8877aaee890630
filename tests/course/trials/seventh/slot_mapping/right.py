"""Right: works block by block rather than token by token: for each logical block the
span start..start+count touches, it takes the run of offsets inside that block and adds
the physical block's rows as one range, so each table entry is read once per block.
"""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    size = self.block_size
    table = self.block_tables[request]
    rows: list[int] = []
    position, end = start, start + count
    while position < end:
        logical, offset = divmod(position, size)
        run = min(size - offset, end - position)        # tokens left in this block
        base = table[logical] * size
        rows.extend(range(base + offset, base + offset + run))
        position += run
    return rows
