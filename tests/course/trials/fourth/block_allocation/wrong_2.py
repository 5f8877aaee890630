"""Misconception: a block that is exactly full has no room left, so a new block is taken as
soon as the tokens fill one: num_tokens // block_size + 1 blocks. One block too many whenever
num_tokens is a multiple of block_size: allocate(r, 16) with block_size 16 takes 2."""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.setdefault(request, [])
    needed = num_tokens // self.block_size + 1
    while len(table) < needed:
        table.append(self.free_blocks.popleft())
