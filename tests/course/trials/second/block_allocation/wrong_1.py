"""Misconception: "the front of the free list" read as the lowest-numbered free block (keep the pool compact).
Same as popleft on a fresh pool; wrong once blocks were freed: free list deque([7, 8, 3]) gives 3, not 7.
"""


def allocate(self, request, num_tokens: int):
    """Grow ``request``'s table in ``self.block_tables`` (a dict; a request may
    have none yet) until it covers ``num_tokens`` tokens, taking each new block
    from the front of ``self.free_blocks`` (a deque). ``self.blocks_for(n)`` says
    how many blocks n tokens need. The scheduler has already checked that enough
    blocks are free.
    """
    table = self.block_tables.setdefault(request, [])
    while len(table) < self.blocks_for(num_tokens):
        block = min(self.free_blocks)          # the lowest free block first
        self.free_blocks.remove(block)
        table.append(block)
