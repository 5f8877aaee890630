"""Misconception: the next free block comes off the deque with pop(), as from a list. Outputs
stay right (any free block serves), but blocks come from the back: on an empty pool of 4,
A (7 tokens) gets [3, 2] and B gets [1], not [0, 1] and [2]."""


def allocate(self, request, num_tokens: int):
    """Grow ``request``'s table in ``self.block_tables`` (a dict; a request may
    have none yet) until it covers ``num_tokens`` tokens, taking each new block
    from the front of ``self.free_blocks`` (a deque). ``self.blocks_for(n)`` says
    how many blocks n tokens need. The scheduler has already checked that enough
    blocks are free.
    """
    table = self.block_tables.setdefault(request, [])
    for _ in range(self.blocks_for(num_tokens) - len(table)):
        table.append(self.free_blocks.pop())
