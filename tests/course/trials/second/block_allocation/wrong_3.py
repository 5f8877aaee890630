"""Misconception: allocate makes the table cover exactly num_tokens, so it also gives surplus blocks back.
Wrong when called for fewer tokens than the table covers: allocate(r, 40) then allocate(r, 5) at block_size 16
drops two blocks that hold computed K/V (the contract only ever grows the table).
"""


def allocate(self, request, num_tokens: int):
    """Grow ``request``'s table in ``self.block_tables`` (a dict; a request may
    have none yet) until it covers ``num_tokens`` tokens, taking each new block
    from the front of ``self.free_blocks`` (a deque). ``self.blocks_for(n)`` says
    how many blocks n tokens need. The scheduler has already checked that enough
    blocks are free.
    """
    table = self.block_tables.setdefault(request, [])
    target = self.blocks_for(num_tokens)
    while len(table) < target:
        table.append(self.free_blocks.popleft())
    while len(table) > target:                 # keep the table tight
        self.free_blocks.appendleft(table.pop())
