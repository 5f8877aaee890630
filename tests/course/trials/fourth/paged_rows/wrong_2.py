"""Misconception: the sequence's keys run up to and including context_len (mask keys <=
context_len). When context_len is a whole number of blocks, key context_len reads the table
entry just past the sequence's blocks: context_len 8, block_size 4 reads entry 2."""
import triton
import triton.language as tl


@triton.jit
def key_rows(BLOCK_TABLE, keys, block_size, context_len):
    in_seq = keys <= context_len
    block = tl.load(BLOCK_TABLE + keys // block_size, mask=in_seq, other=0)
    return block * block_size + keys % block_size
