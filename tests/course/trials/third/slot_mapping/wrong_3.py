"""Misconception: a token's row never changes once known, so each request's rows are memoized on the
manager and only new positions are computed. Stale after the request's blocks are freed and
reallocated (preemption, recompute): table [3] then, re-allocated, [6] -> start 0 still gives row 12, not 24."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1."""
    memo = self.__dict__.setdefault("_rows_of", {})
    rows = memo.setdefault(request, [])
    table, size = self.block_tables[request], self.block_size
    while len(rows) < start + count:
        p = len(rows)
        rows.append(table[p // size] * size + p % size)
    return rows[start:start + count]
