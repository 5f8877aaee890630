"""Misconception: "a sequence takes a new block only when its last one is full", so once a request
has a table it grows by at most one block per call; only a new request gets all its blocks at once.
Goes wrong: block_size 4, table [0] for 4 tokens, allocate(request, 12) (a chunk of 8) -> [0, 1], not [0, 1, 2]."""


def allocate(self, request, num_tokens: int):
    """Grow request's block table until it covers num_tokens tokens."""
    if request not in self.block_tables:
        self.block_tables[request] = [self.free_blocks.popleft()
                                      for _ in range(self.blocks_for(num_tokens))]
    elif len(self.block_tables[request]) * self.block_size < num_tokens:
        self.block_tables[request].append(self.free_blocks.popleft())
