"""Misconception: new token i is in logical block start // block_size + i // block_size (blocks
counted from the first new token, not position 0). Right for block-aligned starts (prefill, decode);
a chunk starting mid-block fails: table [3, 0], block size 4, positions 2..5 give [14, 15, 12, 13]."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1."""
    table, size = self.block_tables[request], self.block_size
    return [table[start // size + i // size] * size + (start + i) % size for i in range(count)]
