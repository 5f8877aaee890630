"""Stage 5's KV memory: fixed-size blocks handed out as sequences grow.

Like an operating system's pages: the cache is ``num_blocks`` blocks of
``block_size`` tokens; each sequence has a block table listing the physical
blocks that hold its tokens, in order. A sequence takes a new block only
when its last one is full, so at most ``block_size - 1`` slots per sequence
are ever empty, and any free block serves any sequence.

With prefix caching, a full block is also known by a hash of its tokens
chained to the hash of the block before it (so equal hashes mean equal
prefixes). A new request whose prompt starts with cached blocks shares them:
each block counts its owners, and only a block nobody owns returns to the
free list, where it stays findable until it is handed out again.
"""
import math
from collections import OrderedDict


# ANCHOR: block_manager
class BlockManager:
    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = False):
        self.num_blocks, self.block_size = num_blocks, block_size
        self.enable_prefix_caching = enable_prefix_caching
        self.free_blocks = OrderedDict.fromkeys(range(num_blocks))   # oldest-freed first
        self.ref_counts = [0] * num_blocks
        # Keyed by the request itself, not its id: an id may be used again while the
        # step of the request that had it is still in flight (async scheduling).
        self.block_tables: dict[object, list[int]] = {}              # request -> physical blocks
        self.block_hashes: dict[object, list[int]] = {}              # request -> hashes of its full blocks
        self.cached: dict[int, int] = {}                             # hash -> block holding those tokens
        self.hash_of: dict[int, int] = {}                            # block -> its hash, if cached
        self.prefix_hits = 0                                         # blocks reused from the cache

    def blocks_for(self, num_tokens: int) -> int:
        return math.ceil(num_tokens / self.block_size)

    def can_allocate(self, request, num_tokens) -> bool:
        """Could the request hold num_tokens tokens after this call to allocate?"""
        table = self.block_tables.get(request)
        if table is None:                                  # new: cached prefix blocks come for free
            hits = self.cached_prefix(request)
            idle_hits = sum(self.ref_counts[b] == 0 for b in hits)   # on the free list, but will be taken
            return self.blocks_for(num_tokens) - len(hits) <= len(self.free_blocks) - idle_hits
        return self.blocks_for(num_tokens) - len(table) <= len(self.free_blocks)

    def allocate(self, request, num_tokens):
        """Grow the request's block table to cover num_tokens tokens."""
        table = self.block_tables.get(request)
        if table is None:
            table = self.block_tables[request] = []
            for block in self.cached_prefix(request):
                self.take(block)
                table.append(block)
                self.prefix_hits += 1
            self.block_hashes[request] = [self.hash_of[b] for b in table]
        while len(table) < self.blocks_for(num_tokens):
            table.append(self.take_free_block())

    def free(self, request):
        """Drop the request's blocks. Blocks still owned by others stay; the
        rest go back to the free list, tail blocks first so that shared
        prefixes are the last to be reused."""
        for block in reversed(self.block_tables.pop(request)):
            self.ref_counts[block] -= 1
            if self.ref_counts[block] == 0:
                self.free_blocks[block] = None
        self.block_hashes.pop(request, None)

    def cache_rows(self, request, start, count) -> list[int]:
        """Cache rows (block * block_size + offset) of tokens start..start+count."""
        table, size = self.block_tables[request], self.block_size
        return [table[p // size] * size + p % size for p in range(start, start + count)]
# ANCHOR_END: block_manager

    def take(self, block) -> int:
        if self.ref_counts[block] == 0:
            del self.free_blocks[block]
        self.ref_counts[block] += 1
        return block

    def take_free_block(self) -> int:
        block, _ = self.free_blocks.popitem(last=False)    # the block free the longest
        if block in self.hash_of:                          # reused: its cached contents are gone
            del self.cached[self.hash_of.pop(block)]
        self.ref_counts[block] = 1
        return block

    # ANCHOR: prefix_cache
    def num_cached_tokens(self, request) -> int:
        return len(self.cached_prefix(request)) * self.block_size

    def cached_prefix(self, request) -> list[int]:
        """Cached blocks matching the start of the request's tokens. Only
        blocks before its last token count: the last token is always
        computed, because its logits give the next token."""
        if not self.enable_prefix_caching:
            return []
        tokens, size, blocks, parent = request.all_token_ids, self.block_size, [], None
        for i in range((len(tokens) - 1) // size):
            parent = hash((parent, tuple(tokens[i * size:(i + 1) * size])))
            if parent not in self.cached:
                break
            blocks.append(self.cached[parent])
        return blocks

    def computed(self, request):
        """After a step: publish the request's newly filled blocks in the cache."""
        if not self.enable_prefix_caching or request not in self.block_tables:
            return                          # (async scheduling: it was freed while its step ran)
        hashes, table, size = self.block_hashes[request], self.block_tables[request], \
            self.block_size
        tokens = request.all_token_ids
        for i in range(len(hashes), request.num_computed_tokens // size):
            hashes.append(hash((hashes[-1] if hashes else None, tuple(tokens[i * size:(i + 1) * size]))))
            if hashes[-1] not in self.cached and table[i] not in self.hash_of:
                self.cached[hashes[-1]] = table[i]
                self.hash_of[table[i]] = hashes[-1]
    # ANCHOR_END: prefix_cache

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - len(self.free_blocks)
