"""Misconception (from "a sequence takes a new block only when its last one is full"): a
request needs num_tokens // block_size + 1 blocks, a fresh one as soon as the last fills
(while any is free). Right for 7 tokens in blocks of 4; 8 tokens take 3 blocks, not 2."""


def allocate(self, request, num_tokens: int):
    table = self.block_tables.setdefault(request, [])
    needed = num_tokens // self.block_size + 1
    while len(table) < needed and self.free_blocks:
        table.append(self.free_blocks.popleft())
