"""Misconception: a block table should list its blocks in ascending physical order (like a sorted
page list), so the new blocks are taken from the front but the table is kept sorted.
Goes wrong: free list [5, 2, 9], table [7], allocate to 4 blocks (block_size 1) -> [2, 5, 7, 9] instead of [7, 5, 2, 9]."""


def allocate(self, request, num_tokens: int):
    """Grow request's block table until it covers num_tokens tokens."""
    table = self.block_tables.setdefault(request, [])
    while len(table) < self.blocks_for(num_tokens):
        table.append(self.free_blocks.popleft())
    table.sort()
