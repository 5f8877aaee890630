"""Misconception: a request's new tokens sit in consecutive cache rows (stage 4's slots), so only the first
position is looked up. Right while the table's blocks are consecutive (a fresh pool, one request);
wrong for table [5, 2] at block_size 4: positions 3..4 give [23, 24], not [23, 8].
"""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1.
    Position p lives in logical block p // self.block_size, which is physical
    block ``self.block_tables[request][p // self.block_size]``, at offset
    p % self.block_size.
    """
    if count == 0:
        return []
    table = self.block_tables[request]
    first = table[start // self.block_size] * self.block_size + start % self.block_size
    return list(range(first, first + count))
