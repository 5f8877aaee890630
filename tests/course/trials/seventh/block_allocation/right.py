"""Right: looks the table up with get() and creates it only when missing, computes
the number of missing blocks once (blocks_for(num_tokens) - held, possibly <= 0), and
extends the table in one call from a generator that pops that many blocks off the front
of the free list, instead of a while loop re-testing the length.
"""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.get(request)
    if table is None:
        table = []
        self.block_tables[request] = table
    missing = self.blocks_for(num_tokens) - len(table)
    table.extend(self.free_blocks.popleft() for _ in range(missing))
