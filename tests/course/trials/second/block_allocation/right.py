"""Correct, written differently: computes the shortfall once and extends the table with a batch of
popleft()s, instead of a while loop that re-asks blocks_for after every block.
"""


def allocate(self, request, num_tokens: int):
    """Grow ``request``'s table in ``self.block_tables`` (a dict; a request may
    have none yet) until it covers ``num_tokens`` tokens, taking each new block
    from the front of ``self.free_blocks`` (a deque). ``self.blocks_for(n)`` says
    how many blocks n tokens need. The scheduler has already checked that enough
    blocks are free.
    """
    table = self.block_tables.get(request)
    if table is None:
        table = self.block_tables[request] = []
    shortfall = self.blocks_for(num_tokens) - len(table)
    if shortfall > 0:
        table.extend([self.free_blocks.popleft() for _ in range(shortfall)])
