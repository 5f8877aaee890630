"""Misconception: a request's new tokens sit in consecutive rows, so only the first one needs the
block table and the rest follow it. True while the table's blocks are consecutive (a fresh pool);
with table [3, 0], block size 4, positions 2..5 give [14, 15, 16, 17] instead of [14, 15, 0, 1]."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1."""
    table = self.block_tables[request]
    first = table[start // self.block_size] * self.block_size + start % self.block_size
    return [first + i for i in range(count)]
