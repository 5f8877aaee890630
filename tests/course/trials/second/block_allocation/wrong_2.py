"""Misconception: n tokens need n // block_size + 1 blocks (the "+1 for the partial block" rule), so a
count that fills its last block exactly takes one block too many: 16 tokens at block_size 16 take 2 blocks.
"""


def allocate(self, request, num_tokens: int):
    """Grow ``request``'s table in ``self.block_tables`` (a dict; a request may
    have none yet) until it covers ``num_tokens`` tokens, taking each new block
    from the front of ``self.free_blocks`` (a deque). ``self.blocks_for(n)`` says
    how many blocks n tokens need. The scheduler has already checked that enough
    blocks are free.
    """
    if request not in self.block_tables:
        self.block_tables[request] = []
    table = self.block_tables[request]
    needed = num_tokens // self.block_size + 1     # full blocks, plus the one being filled
    for _ in range(needed - len(table)):
        table.append(self.free_blocks.popleft())
