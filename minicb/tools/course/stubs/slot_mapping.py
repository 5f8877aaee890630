"""Chapter 5: the slot mapping.

The kernels find a token's K/V by its cache row: its physical block times the block
size, plus its offset in the block. Check: ``python -m minicb check slot_mapping``.
"""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1.
    Position p lives in logical block p // self.block_size, which is physical
    block ``self.block_tables[request][p // self.block_size]``, at offset
    p % self.block_size.
    """
    raise NotImplementedError
