"""Misconception: the most recently freed block is the best to reuse (still warm, as in an
OS free list), so new blocks are popped from the back of free_blocks. Right count, wrong
blocks: on a fresh pool of 4, the first request gets block 3 instead of 0."""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.setdefault(request, [])
    while len(table) < self.blocks_for(num_tokens):
        table.append(self.free_blocks.pop())
