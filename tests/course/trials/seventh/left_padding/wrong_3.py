"""Misconception: padding columns are masked out of attention, so their positions do
not matter; each column simply gets column - pad_len, which is negative in the padding.
The contract gives padding position 0 (a negative position would also index rotary
tables from the end). Input: [[5, 6, 7], [8]] -> positions must be
[[0, 1, 2], [0, 0, 0]]; this gives [[0, 1, 2], [-2, -1, 0]].
"""


def left_padded(token_lists: list[list[int]]):
    longest = max(len(tokens) for tokens in token_lists)
    pad_lens = [longest - len(tokens) for tokens in token_lists]
    ids = [[0] * pad + list(tokens) for pad, tokens in zip(pad_lens, token_lists)]
    positions = [[col - pad for col in range(longest)] for pad in pad_lens]
    return ids, positions, pad_lens
