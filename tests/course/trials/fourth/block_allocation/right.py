"""Right, but the shortfall is counted once (blocks_for called once) and the table is
extended in one go from a list of popleft()s; a request that already holds enough blocks is
left untouched (and one with no table gets an empty one)."""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.get(request)
    if table is None:
        table = self.block_tables[request] = []
    shortfall = self.blocks_for(num_tokens) - len(table)
    if shortfall > 0:
        table.extend([self.free_blocks.popleft() for _ in range(shortfall)])
