"""Misconception: "cache_rows" caches the rows: compute a request's row list once and slice
it on later calls, recomputing only when it is too short. After a preemption frees the
request's blocks and it is admitted again into other blocks, the old rows come back."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    memo = self.__dict__.setdefault("_rows_of", {})
    rows = memo.get(request)
    if rows is None or len(rows) < start + count:
        size = self.block_size
        rows = [block * size + offset
                for block in self.block_tables[request] for offset in range(size)]
        memo[request] = rows
    return rows[start:start + count]
