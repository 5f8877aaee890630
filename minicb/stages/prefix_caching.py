"""Prefix caching: requests that start with the same tokens share their KV blocks (chapter 6).

Requests often begin alike: a system prompt, a few-shot template, a long
document asked several questions. The K/V of equal prefixes are equal, so
stage 5's blocks can hold them once for every request that starts that way.

A full block is also known by a hash of its tokens chained to the hash of the
block before it, so equal hashes mean equal prefixes. A request being admitted
takes the cached blocks that match the start of its tokens and computes only
what follows them. Each block counts its owners; only a block nobody owns
returns to the free list, where it stays findable until it is handed out
again, least recently freed first.

Stage 5's block manager and scheduler, each extended; the step is unchanged.
"""
from collections import OrderedDict

from .paged import BlockManager, PagedEngine, PagedScheduler


# ANCHOR: block_manager
class PrefixCachingBlockManager(BlockManager):
    """Stage 5's block manager, with full blocks shared by their tokens' hashes."""

    def __init__(self, num_blocks: int, block_size: int):
        super().__init__(num_blocks, block_size)
        self.free_blocks = OrderedDict.fromkeys(range(num_blocks))  # oldest-freed first
        self.ref_counts = [0] * num_blocks
        # request -> hashes of its full blocks
        self.block_hashes: dict[object, list[int]] = {}
        self.cached: dict[int, int] = {}        # hash -> block holding those tokens
        self.hash_of: dict[int, int] = {}       # block -> its hash, if cached
        self.prefix_hits = 0                    # blocks reused from the cache

    def can_allocate(self, request, num_tokens) -> bool:
        if request in self.block_tables:
            return super().can_allocate(request, num_tokens)
        hits = self.cached_prefix(request)      # new: cached blocks come for free
        # On the free list, but will be taken.
        idle_hits = sum(self.ref_counts[b] == 0 for b in hits)
        return (self.blocks_for(num_tokens) - len(hits)
                <= len(self.free_blocks) - idle_hits)

    def allocate(self, request, num_tokens):
        table = self.block_tables.get(request)
        if table is None:
            table = self.block_tables[request] = []
            for block in self.cached_prefix(request):
                table.append(self.take(block))
                self.prefix_hits += 1
            self.block_hashes[request] = [self.hash_of[b] for b in table]
        while len(table) < self.blocks_for(num_tokens):
            table.append(self.take_free_block())

    def free(self, request):
        """Blocks still owned by others stay; the rest go back to the free list,
        tail blocks first, so that shared prefixes are the last to be reused."""
        for block in reversed(self.block_tables.pop(request)):
            self.ref_counts[block] -= 1
            if self.ref_counts[block] == 0:
                self.free_blocks[block] = None
        self.block_hashes.pop(request, None)

    def take(self, block) -> int:
        if self.ref_counts[block] == 0:
            del self.free_blocks[block]
        self.ref_counts[block] += 1
        return block

    def take_free_block(self) -> int:
        block, _ = self.free_blocks.popitem(last=False)    # the block free the longest
        if block in self.hash_of:                 # reused: its cached contents are gone
            del self.cached[self.hash_of.pop(block)]
        self.ref_counts[block] = 1
        return block
# ANCHOR_END: block_manager

    # ANCHOR: prefix_cache
    def num_cached_tokens(self, request) -> int:
        return len(self.cached_prefix(request)) * self.block_size

    def cached_prefix(self, request) -> list[int]:
        """Cached blocks matching the start of the request's tokens. Only
        blocks before its last token count: the last token is always
        computed, because its logits give the next token."""
        tokens, size, blocks, parent = request.all_token_ids, self.block_size, [], None
        for i in range((len(tokens) - 1) // size):
            parent = hash((parent, tuple(tokens[i * size:(i + 1) * size])))
            if parent not in self.cached:
                break
            blocks.append(self.cached[parent])
        return blocks

    def computed(self, request):
        """After a step is launched: publish the request's newly filled blocks
        in the cache, those whose tokens are all known on the host."""
        hashes, table, size = (self.block_hashes[request], self.block_tables[request],
                               self.block_size)
        tokens = request.all_token_ids
        for i in range(len(hashes),
                       min(request.num_computed_tokens, len(tokens)) // size):
            hashes.append(hash((hashes[-1] if hashes else None,
                                tuple(tokens[i * size:(i + 1) * size]))))
            if hashes[-1] not in self.cached and table[i] not in self.hash_of:
                self.cached[hashes[-1]] = table[i]
                self.hash_of[table[i]] = hashes[-1]
    # ANCHOR_END: prefix_cache


# ANCHOR: prefix_scheduler
class PrefixCachingScheduler(PagedScheduler):
    """Stage 5's scheduler, told about shared prefixes: a request being admitted
    starts after its cached blocks, and every step publishes the blocks it
    filled."""

    def reserve(self, request, budget) -> int:
        request.num_computed_tokens = self.kv.num_cached_tokens(request)
        n = super().reserve(request, budget)
        if n == 0:
            request.num_computed_tokens = 0
        return n

    def advance(self, batch):
        super().advance(batch)
        for request in batch.requests:
            self.kv.computed(request)
# ANCHOR_END: prefix_scheduler


# ANCHOR: engine
class PrefixCachingEngine(PagedEngine):
    """Stage 5 with prefix caching: its blocks and scheduler, extended."""
    scheduler_class = PrefixCachingScheduler

    def make_kv_manager(self):
        paged = super().make_kv_manager()        # sizes and allocates the cache
        return PrefixCachingBlockManager(paged.num_blocks, paged.block_size)
# ANCHOR_END: engine
