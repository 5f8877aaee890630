"""Right, counted up front: the number of missing blocks is computed once from blocks_for and the
table extended in place from a generator of popleft() calls (no while loop, no per-block length check);
a request without a table gets an (empty, then grown) list."""
import itertools


def allocate(self, request, num_tokens: int):
    """Grow request's block table until it covers num_tokens tokens."""
    table = self.block_tables.setdefault(request, [])
    missing = self.blocks_for(num_tokens) - len(table)
    table.extend(self.free_blocks.popleft() for _ in itertools.repeat(None, max(missing, 0)))
