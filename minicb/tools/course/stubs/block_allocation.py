"""Chapter 5: the block manager's allocate.

Stage 5's cache is ``self.num_blocks`` blocks of ``self.block_size`` tokens. Each
request has a block table: the physical blocks holding its tokens, in order.
Check: ``python -m minicb check block_allocation``.
"""


def allocate(self, request, num_tokens: int):
    """Grow ``request``'s table in ``self.block_tables`` (a dict; a request may
    have none yet) until it covers ``num_tokens`` tokens, taking each new block
    from the front of ``self.free_blocks`` (a deque). ``self.blocks_for(n)`` says
    how many blocks n tokens need. The scheduler has already checked that enough
    blocks are free.
    """
    raise NotImplementedError
