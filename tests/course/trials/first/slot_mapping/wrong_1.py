"""Misconception: a request's new tokens are contiguous in the cache, so only the first one is
looked up and the rest follow it. Right for decodes and for fresh pools (blocks handed out in
order); table [5, 2], block 4, start 2, count 4 gives [22, 23, 24, 25], not [22, 23, 8, 9]."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1.
    Position p lives in logical block p // self.block_size, which is physical
    block ``self.block_tables[request][p // self.block_size]``, at offset
    p % self.block_size.
    """
    table = self.block_tables[request]
    first = table[start // self.block_size] * self.block_size + start % self.block_size
    return list(range(first, first + count))
