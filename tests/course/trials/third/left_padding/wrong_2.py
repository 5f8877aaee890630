"""Misconception: a rectangle should have an aligned width (GPUs like multiples of 8), so every row
is padded to the longest rounded up to a multiple of 8; the mask hides the extra columns anyway.
Goes wrong: [[5, 6, 7], [8]] -> ids [[0]*5 + [5, 6, 7], [0]*7 + [8]], pad_lens [5, 7] instead of width 3."""

ALIGN = 8


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens) for the rows ``token_lists``."""
    longest = max((len(row) for row in token_lists), default=0)
    width = -(-longest // ALIGN) * ALIGN
    ids, positions, pad_lens = [], [], []
    for row in token_lists:
        pad = width - len(row)
        ids.append([0] * pad + list(row))
        positions.append([0] * pad + list(range(len(row))))
        pad_lens.append(pad)
    return ids, positions, pad_lens
