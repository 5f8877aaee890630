"""Prefix caching: requests that start with the same tokens share their KV blocks (chapter 6).

Requests often begin alike: a system prompt, a few-shot template, a long
document asked several questions. The K/V of equal prefixes are equal, so
stage 5's blocks can hold them once for every request that starts that way.

A full block is found by a hash of its tokens chained to the hash of the block
before it (SHA-256: a prompt cannot be written to collide with another, as it
can with Python's ``hash()``), and taken only if its tokens, and the cached
block before it, are the request's own: a hash may find a block, the tokens
decide. A request being admitted takes the cached blocks that match the start
of its tokens and computes only what follows them. Each block counts its
owners; only a block nobody owns returns to the free list, where it stays
findable until it is handed out again, least recently freed first.

Stage 5's block manager and scheduler, each extended; the step is unchanged.
"""
import hashlib
from array import array
from collections import OrderedDict
from dataclasses import dataclass

from .paged import BlockManager, PagedEngine, PagedScheduler


# ANCHOR: cached_block
def block_hash(parent: "CachedBlock | None", tokens: tuple[int, ...]) -> bytes:
    """SHA-256 of the block before it and this block's token ids. Python's hash()
    of the same would do for honest prompts, but two different blocks with equal
    hash() values take seconds to find, and one would be served the other's K/V."""
    before = parent.hash if parent else b""
    return hashlib.sha256(before + array("q", tokens).tobytes()).digest()


@dataclass(eq=False, repr=False)
class CachedBlock:
    """What a full block holds: its tokens, after those of its parent. A new
    object each time a block is filled, so that a block refilled with other
    tokens is never mistaken for what it held before."""
    parent: "CachedBlock | None"
    tokens: tuple[int, ...]
    block: int
    hash: bytes

    def holds(self, parent: "CachedBlock | None", tokens: tuple[int, ...]) -> bool:
        """The tokens decide: these tokens, after that very parent, all the way back."""
        return self.parent is parent and self.tokens == tokens

    def __repr__(self):        # not the whole chain of parents: thousands long
        return f"CachedBlock(block={self.block}, hash={self.hash.hex()[:12]})"
# ANCHOR_END: cached_block


# ANCHOR: block_manager
class PrefixCachingBlockManager(BlockManager):
    """Stage 5's block manager, with full blocks shared by their tokens' hashes."""

    def __init__(self, num_blocks: int, block_size: int):
        super().__init__(num_blocks, block_size)
        self.free_blocks = OrderedDict.fromkeys(range(num_blocks))  # oldest-freed first
        self.ref_counts = [0] * num_blocks
        # request -> what each of its full blocks holds
        self.filled: dict[object, list[CachedBlock]] = {}
        self.cached: dict[bytes, CachedBlock] = {}     # hash -> a block, findable
        self.cached_as: dict[int, CachedBlock] = {}    # block -> its entry, if cached
        self.prefix_hits = 0                    # blocks reused from the cache

    def can_allocate(self, request, num_tokens) -> bool:
        if request in self.block_tables:
            return super().can_allocate(request, num_tokens)
        hits = self.cached_prefix(request)      # new: cached blocks come for free
        # On the free list, but will be taken.
        idle_hits = sum(self.ref_counts[hit.block] == 0 for hit in hits)
        return (self.blocks_for(num_tokens) - len(hits)
                <= len(self.free_blocks) - idle_hits)

    def allocate(self, request, num_tokens):
        table = self.block_tables.get(request)
        if table is None:
            table = self.block_tables[request] = []
            hits = self.cached_prefix(request)
            for entry in hits:
                table.append(self.take(entry.block))
                self.prefix_hits += 1
            self.filled[request] = hits
        while len(table) < self.blocks_for(num_tokens):
            table.append(self.take_free_block())

    def free(self, request):
        """Blocks still owned by others stay; the rest go back to the free list,
        tail blocks first, so that shared prefixes are the last to be reused."""
        for block in reversed(self.block_tables.pop(request)):
            self.ref_counts[block] -= 1
            if self.ref_counts[block] == 0:
                self.free_blocks[block] = None
        self.filled.pop(request, None)

    def take(self, block) -> int:
        if self.ref_counts[block] == 0:
            del self.free_blocks[block]
        self.ref_counts[block] += 1
        return block

    def take_free_block(self) -> int:
        block, _ = self.free_blocks.popitem(last=False)    # the block free the longest
        if block in self.cached_as:               # reused: its cached contents are gone
            del self.cached[self.cached_as.pop(block).hash]
        self.ref_counts[block] = 1
        return block
# ANCHOR_END: block_manager

    # ANCHOR: prefix_cache
    def num_cached_tokens(self, request) -> int:
        return len(self.cached_prefix(request)) * self.block_size

    def cached_prefix(self, request) -> list[CachedBlock]:
        """Cached blocks matching the start of the request's tokens. Only
        blocks before its last token count: the last token is always
        computed, because its logits give the next token."""
        parent, hits = None, []
        for i in range((len(request.all_token_ids) - 1) // self.block_size):
            tokens = self.block_tokens(request, i)
            entry = self.cached.get(block_hash(parent, tokens))
            if entry is None or not entry.holds(parent, tokens):
                break
            hits.append(entry)
            parent = entry
        return hits

    def computed(self, request):
        """After a step is launched: publish the request's newly filled blocks
        in the cache, those whose tokens are all known on the host."""
        filled, table = self.filled[request], self.block_tables[request]
        known = min(request.num_computed_tokens, len(request.all_token_ids))
        for i in range(len(filled), known // self.block_size):
            parent = filled[-1] if filled else None
            tokens = self.block_tokens(request, i)
            entry = CachedBlock(parent, tokens, table[i], block_hash(parent, tokens))
            found = self.cached.get(entry.hash)
            if found is not None and found.holds(parent, tokens):
                entry = found      # another block holds these: it stays the cached one
            elif table[i] not in self.cached_as and (not found or self.orphan(found)):
                if found is not None:
                    del self.cached_as[found.block]
                self.cached[entry.hash] = self.cached_as[table[i]] = entry
            filled.append(entry)

    def orphan(self, entry: CachedBlock) -> bool:
        """Whether no walk can reach this entry any more: the block before it was
        handed out again, so a new entry may take its hash."""
        return entry.parent is not None and \
            self.cached.get(entry.parent.hash) is not entry.parent

    def block_tokens(self, request, i) -> tuple[int, ...]:
        size = self.block_size
        return tuple(request.all_token_ids[i * size:(i + 1) * size])
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
