"""Misconception: free lists are stacks, so the most recently freed block (the right
end of the deque) is reused first, as a cache-friendly allocator would. The contract
takes each new block from the front. Every block works for attention, so the tokens
come out the same, but the block tables and the free list differ from the required
state. Input: free_blocks deque([0, 1, 2, 3]), block_size 4, a new request,
allocate(request, 5) -> table [0, 1]; this gives [3, 2].
"""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.setdefault(request, [])
    while len(table) < self.blocks_for(num_tokens):
        table.append(self.free_blocks.pop())
