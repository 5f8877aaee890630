"""Right, column by column instead of row by row: each column c of row r is real when
c >= pad_r, and then holds token c - pad_r at position c - pad_r; every list is new."""


def left_padded(token_lists: list[list[int]]):
    rows = [list(tokens) for tokens in token_lists]
    width = max(map(len, rows), default=0)
    pad_lens = [width - len(row) for row in rows]
    ids = [[row[c - pad] if c >= pad else 0 for c in range(width)]
           for row, pad in zip(rows, pad_lens)]
    positions = [[max(c - pad, 0) for c in range(width)] for pad in pad_lens]
    return ids, positions, pad_lens
