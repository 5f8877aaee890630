"""Misconception: n tokens need n // block_size + 1 blocks ("the block the next token goes in").
Right off block boundaries; at an exact multiple it takes one block too many: 32 tokens of block
size 16 get 3 blocks, one more than can_allocate checked (IndexError when the pool runs dry)."""


def allocate(self, request, num_tokens: int):
    """Grow request's block table until it covers num_tokens tokens."""
    table = self.block_tables.setdefault(request, [])
    needed = num_tokens // self.block_size + 1
    for _ in range(needed - len(table)):
        table.append(self.free_blocks.popleft())
