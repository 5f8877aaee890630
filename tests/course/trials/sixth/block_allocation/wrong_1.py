"""Misconception: a free list is a stack, so a new block is pop()ped from its end. Tables still
cover the tokens and no block has two owners, but the blocks taken are the wrong ones: a fresh
pool of 8 gives a new request [7, 6] for 20 tokens of block size 16, not [0, 1]."""


def allocate(self, request, num_tokens: int):
    """Grow request's block table until it covers num_tokens tokens."""
    table = self.block_tables.setdefault(request, [])
    while len(table) < self.blocks_for(num_tokens):
        table.append(self.free_blocks.pop())
