"""Right, column by column: builds each row by walking the L columns and asking whether column c
is left of the row's first real token, rather than concatenating a padding list and the row.
Copies the input (never mutates it); an empty batch gives three empty lists."""


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens) for the rows ``token_lists``."""
    width = max(map(len, token_lists), default=0)
    pad_lens = [width - len(row) for row in token_lists]
    ids = [[row[c - pad] if c >= pad else 0 for c in range(width)]
           for row, pad in zip(token_lists, pad_lens)]
    positions = [[max(c - pad, 0) for c in range(width)] for pad in pad_lens]
    return ids, positions, pad_lens
