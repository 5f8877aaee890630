"""Misconception: num_tokens is how many *more* tokens the request needs room for, so
blocks_for(num_tokens) new blocks are appended on every call. Right on a first call, but a
growing request takes far too many: table of 1 block, allocate(r, 17) with block_size 16 adds 2."""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.setdefault(request, [])
    for _ in range(self.blocks_for(num_tokens)):
        table.append(self.free_blocks.popleft())
