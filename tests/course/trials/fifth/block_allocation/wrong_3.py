"""Misconception: a free list is a stack; the most recently freed block (the back of the
deque) is taken first, as it is still warm. On a fresh pool of 8 blocks the first request
gets [7, 6] instead of [0, 1], and freed blocks are reused last-in first-out."""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.setdefault(request, [])
    while len(table) < self.blocks_for(num_tokens):
        table.append(self.free_blocks.pop())
