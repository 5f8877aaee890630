"""Misconception: a request's row list only grows, so memoise it per request and extend it
when the table grows. After a preemption frees the request and it is allocated again (new
blocks, same number), the memo returns the old blocks' rows."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    memo = self.__dict__.setdefault("_rows_memo", {})
    table = self.block_tables[request]
    rows = memo.setdefault(request, [])
    covered = len(rows) // self.block_size            # blocks already expanded
    for block in table[covered:]:
        rows.extend(range(block * self.block_size, (block + 1) * self.block_size))
    return rows[start:start + count]
