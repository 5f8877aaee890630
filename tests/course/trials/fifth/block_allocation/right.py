"""Right: works out how many blocks are missing (never negative) and extends the existing
table in place from a generator of popleft() calls, instead of a while-loop that appends
one block per test; a request without a table gets an empty one first."""


def allocate(self, request, num_tokens: int):
    if request not in self.block_tables:
        self.block_tables[request] = []
    table = self.block_tables[request]
    missing = max(self.blocks_for(num_tokens) - len(table), 0)
    table.extend(self.free_blocks.popleft() for _ in range(missing))
