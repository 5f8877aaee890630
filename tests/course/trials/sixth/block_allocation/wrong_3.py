"""Misconception (stage 4's allocate carried over): a request's memory is taken once, when it is
admitted, for the tokens it has then. Later calls with more tokens leave its table as it is:
allocate(r, 16) then allocate(r, 17) with block size 16 leaves r with 1 block, not 2."""


def allocate(self, request, num_tokens: int):
    """Grow request's block table until it covers num_tokens tokens."""
    if request not in self.block_tables:
        self.block_tables[request] = [self.free_blocks.popleft()
                                      for _ in range(self.blocks_for(num_tokens))]
