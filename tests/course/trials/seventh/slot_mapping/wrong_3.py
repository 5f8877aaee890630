"""Misconception: a token's cache row never changes once it is known, so rows are
memoized per (request, position) on the block manager to save recomputing them every
step. A request's block table does change: after a preemption its blocks are freed and
it is given others when re-admitted, so the memo hands back rows in blocks that now
belong to someone else. Input: block_size 4, table [3]; cache_rows(r, 0, 2) -> [12, 13];
then the table becomes [5] (freed and re-allocated); cache_rows(r, 0, 2) must give
[20, 21]; this still gives [12, 13].
"""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    memo = self.__dict__.setdefault("_row_memo", {})
    size = self.block_size
    rows = []
    for p in range(start, start + count):
        key = (id(request), p)
        if key not in memo:
            memo[key] = self.block_tables[request][p // size] * size + p % size
        rows.append(memo[key])
    return rows
