"""Misconception: new tokens always go into the request's last block (true for every decode
step, and for a prompt that fits one block). A prefill or chunk spanning blocks is mapped into the
last block: table [3, 0], block size 4, positions 0..5 give [0, 1, 2, 3, 0, 1]."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1."""
    last = self.block_tables[request][-1]
    return [last * self.block_size + p % self.block_size for p in range(start, start + count)]
