"""Misconception: a token's row is its block's first row plus its position (position
and offset confused). The offset inside the block is position % block_size; adding the
whole position only agrees for tokens in the first logical block, so sequences shorter
than one block look right. Input: block_size 4, table [7, 2], start 5, count 1 ->
row 2*4 + 1 = 9; this gives 2*4 + 5 = 13 (another block's row).
"""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    size = self.block_size
    table = self.block_tables[request]
    return [table[p // size] * size + p for p in range(start, start + count)]
