"""Misconception: num_tokens is the number of *new* tokens this step brings (as the
scheduler's n is), so when the table does not yet cover them the request gets
blocks_for(num_tokens) more blocks. It is the total the table must cover. Input:
block_size 16, a table of 1 block, allocate(request, 17) -> 1 more block (2 in all);
this takes 2 more (3 in all), more than the scheduler checked were free.
"""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.setdefault(request, [])
    if len(table) * self.block_size >= num_tokens:
        return
    for _ in range(self.blocks_for(num_tokens)):
        table.append(self.free_blocks.popleft())
