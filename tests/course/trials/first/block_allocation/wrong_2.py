"""Misconception: a new request gets its prompt's blocks at once, and after that "a sequence
takes a new block only when its last one is full", so a table that exists grows by one block a
call. Wrong under chunked prefill: a second 16-token chunk with block_size 4 needs 4 new blocks, gets 1."""


def allocate(self, request, num_tokens: int):
    """Grow ``request``'s table in ``self.block_tables`` (a dict; a request may
    have none yet) until it covers ``num_tokens`` tokens, taking each new block
    from the front of ``self.free_blocks`` (a deque). ``self.blocks_for(n)`` says
    how many blocks n tokens need. The scheduler has already checked that enough
    blocks are free.
    """
    table = self.block_tables.get(request)
    if table is None:                            # admission: the whole prompt
        self.block_tables[request] = [self.free_blocks.popleft()
                                      for _ in range(self.blocks_for(num_tokens))]
    elif len(table) < self.blocks_for(num_tokens):   # decoding: its last block is full
        table.append(self.free_blocks.popleft())
