"""Misconception: the blocks needed for n tokens are n // block_size + 1 ("the full
blocks, plus the one the next token goes in"). That is one too many when n is an exact
multiple of block_size; the stub's self.blocks_for(n) is the ceiling. Input: block_size
16, a new request, allocate(request, 32) -> 2 blocks; this takes 3, and on a cache whose
free blocks were exactly enough it pops from an empty deque.
"""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.setdefault(request, [])
    needed = num_tokens // self.block_size + 1
    while len(table) < needed:
        table.append(self.free_blocks.popleft())
