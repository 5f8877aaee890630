"""Misconception: a request's blocks lie one after another in the pool, so only the first position's
block is looked up and the rows run on contiguously from there. True on a fresh pool (blocks 0, 1, 2...),
wrong once blocks are reused: block_size 4, table [5, 2], start 2, count 4 -> [22, 23, 24, 25], not [22, 23, 8, 9]."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1."""
    if count <= 0:
        return []
    table = self.block_tables[request]
    first = table[start // self.block_size] * self.block_size + start % self.block_size
    return list(range(first, first + count))
