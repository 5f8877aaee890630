"""Misconception: "offset in the block" counts from where this call starts, (p - start) % block_size.
Right whenever start is a block boundary (a prefill from 0), wrong for a decode mid-block:
table [7], block_size 16, start 5, count 1 gives row 112 instead of 117."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    table = self.block_tables[request]
    size = self.block_size
    return [table[p // size] * size + (p - start) % size for p in range(start, start + count)]
