"""Misconception: a step's new tokens are contiguous in the cache, as they were in
stage 4's slots, so only the first token's row needs the block table; the rest follow
it row by row. That holds inside one block, not across a block boundary, where the
next logical block is usually some other physical block. Input: block_size 4,
table [7, 2], start 3, count 2 -> rows [31, 8]; this gives [31, 32].
"""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    if count == 0:
        return []
    size = self.block_size
    first = self.block_tables[request][start // size] * size + start % size
    return [first + i for i in range(count)]
