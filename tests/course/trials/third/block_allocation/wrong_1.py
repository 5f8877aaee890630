"""Misconception: the free list is a stack, so a new block is taken with ``free_blocks.pop()``
(the most recently freed, "hottest" block) rather than from the front.
Goes wrong: fresh pool of 8 blocks, first request of 5 tokens with block_size 4 -> table [7, 6] instead of [0, 1]."""


def allocate(self, request, num_tokens: int):
    """Grow request's block table until it covers num_tokens tokens."""
    table = self.block_tables.setdefault(request, [])
    while len(table) < self.blocks_for(num_tokens):
        table.append(self.free_blocks.pop())
