"""Misconception: start is always where the request's uncomputed tokens begin, so read it
from request.num_computed_tokens (as prepare() passes it). Called with any other start, e.g.
cache_rows(r, 0, 3) for a request with 5 tokens computed, it maps positions 5..7 instead of 0..2."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    table, size = self.block_tables[request], self.block_size
    first = request.num_computed_tokens
    return [table[p // size] * size + p % size for p in range(first, first + count)]
