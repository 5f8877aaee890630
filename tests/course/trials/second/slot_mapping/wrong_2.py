"""Misconception: a single new token (a decode) always lives in the table's last block, so that fast path
reads table[-1]. Right when the table covers exactly start+1 tokens; wrong for any earlier position:
table [5, 2] at block_size 4, cache_rows(r, 1, 1) gives [9], not [21].
"""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1.
    Position p lives in logical block p // self.block_size, which is physical
    block ``self.block_tables[request][p // self.block_size]``, at offset
    p % self.block_size.
    """
    table, size = self.block_tables[request], self.block_size
    if count == 1:                       # decode: the newest token is in the newest block
        return [table[-1] * size + start % size]
    return [table[p // size] * size + p % size for p in range(start, start + count)]
