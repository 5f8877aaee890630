"""Misconception: the tokens being written are always in the request's newest block (allocate just
appended it), so every row is ``table[-1] * block_size + p % block_size``. Right for decodes and
one-block prompts; wrong when the span covers earlier blocks: block_size 4, table [3, 8], start 0, count 6 -> [32..35, 32, 33], not [12..15, 32, 33]."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1."""
    if count <= 0:
        return []
    last = self.block_tables[request][-1]
    return [last * self.block_size + p % self.block_size for p in range(start, start + count)]
