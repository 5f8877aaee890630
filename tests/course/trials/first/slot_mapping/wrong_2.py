"""Misconception: a request's rows never change once known, so they are memoised per request
(cache_rows runs every step). Stale after a preemption, or a freed request's blocks reused:
rows computed for table [0, 1] are still returned after the request is re-admitted into [3, 2]."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1.
    Position p lives in logical block p // self.block_size, which is physical
    block ``self.block_tables[request][p // self.block_size]``, at offset
    p % self.block_size.
    """
    memo = self.__dict__.setdefault("_rows_memo", {})
    known = memo.setdefault(request, [])
    table = self.block_tables[request]
    for p in range(len(known), start + count):       # extend only what is new
        known.append(table[p // self.block_size] * self.block_size + p % self.block_size)
    return known[start:start + count]
