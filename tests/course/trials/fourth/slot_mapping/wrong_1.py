"""Misconception: the tokens of one call sit side by side in the cache, so find the row of
the first one and count on from it. Right within one block (every decode), wrong when the
range crosses into another, non-adjacent block: table [5, 2], block_size 4, start 2, count 4."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    table = self.block_tables[request]
    first = table[start // self.block_size] * self.block_size + start % self.block_size
    return [first + i for i in range(count)]
