"""Misconception: a request's tokens are consecutive rows once its first is found, so look
up the block of `start` only. True while its blocks happen to be adjacent (a fresh pool);
with table [3, 0] and blocks of 4, positions 2..5 give [14, 15, 16, 17] instead of [14, 15, 0, 1]."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    table = self.block_tables[request]
    first = table[start // self.block_size] * self.block_size + start % self.block_size
    return list(range(first, first + count))
