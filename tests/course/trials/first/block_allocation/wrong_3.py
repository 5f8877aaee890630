"""Misconception: leave room for the token about to be sampled, so cover num_tokens + 1.
Holds an extra block whenever num_tokens is a multiple of block_size (16 tokens, block 16:
2 blocks), and pops an empty deque when can_allocate said exactly enough blocks were free."""


def allocate(self, request, num_tokens: int):
    """Grow ``request``'s table in ``self.block_tables`` (a dict; a request may
    have none yet) until it covers ``num_tokens`` tokens, taking each new block
    from the front of ``self.free_blocks`` (a deque). ``self.blocks_for(n)`` says
    how many blocks n tokens need. The scheduler has already checked that enough
    blocks are free.
    """
    table = self.block_tables.setdefault(request, [])
    needed = self.blocks_for(num_tokens + 1)     # + the token this step will sample
    while len(table) < needed:
        table.append(self.free_blocks.popleft())
