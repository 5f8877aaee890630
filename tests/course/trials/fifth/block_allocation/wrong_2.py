"""Misconception: allocate makes the table exactly cover num_tokens, so asked for fewer
tokens than it holds it gives the surplus blocks back to the free list. Table [0, 1, 2]
(blocks of 4), allocate(r, 5) leaves [0, 1] and frees block 2; the contract only grows."""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.setdefault(request, [])
    needed = self.blocks_for(num_tokens)
    while len(table) < needed:
        table.append(self.free_blocks.popleft())
    while len(table) > needed:
        self.free_blocks.append(table.pop())
