"""Misconception: // and % by the block size become a shift by the offset's bit width and a
mask by block_size - 1. Right for block sizes 1, 16, 32 (powers of two); for block_size 12,
position 13 gives logical block 13 >> 4 = 0, offset 13 & 11 = 9, instead of block 1, offset 1."""


def cache_rows(self, request, start: int, count: int) -> list[int]:
    """The cache rows of the request's tokens at positions start .. start+count-1.
    Position p lives in logical block p // self.block_size, which is physical
    block ``self.block_tables[request][p // self.block_size]``, at offset
    p % self.block_size.
    """
    size = self.block_size
    shift, mask = (size - 1).bit_length(), size - 1   # bits of an offset
    table = self.block_tables[request]
    return [table[p >> shift] * size + (p & mask) for p in range(start, start + count)]
