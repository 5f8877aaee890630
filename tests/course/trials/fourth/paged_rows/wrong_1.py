"""Misconception: the caller masks every key at or past context_len, so the table can be read
for all keys unmasked. Values come out right, but a tile that runs past the sequence's last
block reads table entries beyond it (context_len 5, block_size 4, a tile of 16 keys reads entry 3)."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    block = tl.load(BLOCK_TABLE + keys // block_size)
    return block * block_size + keys % block_size
