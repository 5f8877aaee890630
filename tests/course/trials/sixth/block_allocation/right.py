"""Right, in one step instead of a block-at-a-time loop: it counts the blocks missing
(blocks_for(num_tokens) - len(table), never negative) and extends the table with that many
blocks popped from the front of the free deque."""


def allocate(self, request, num_tokens: int):
    """Grow request's block table until it covers num_tokens tokens."""
    table = self.block_tables.get(request)
    if table is None:
        table = self.block_tables[request] = []
    missing = self.blocks_for(num_tokens) - len(table)
    table.extend(self.free_blocks.popleft() for _ in range(max(missing, 0)))
