"""Correct, written differently: instead of computing how many blocks are missing with
blocks_for and popping that many, it appends blocks from the front of the free list while
the table's capacity (len(table) * block_size) is still short of num_tokens (the same count,
ceil(num_tokens / block_size)); the table is created with setdefault."""


def allocate(self, request, num_tokens: int):
    """Grow ``request``'s table in ``self.block_tables`` (a dict; a request may
    have none yet) until it covers ``num_tokens`` tokens, taking each new block
    from the front of ``self.free_blocks`` (a deque). ``self.blocks_for(n)`` says
    how many blocks n tokens need. The scheduler has already checked that enough
    blocks are free.
    """
    table = self.block_tables.setdefault(request, [])
    while len(table) * self.block_size < num_tokens:
        table.append(self.free_blocks.popleft())
