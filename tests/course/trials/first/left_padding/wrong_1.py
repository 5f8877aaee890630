"""Misconception: padding is token 0, so a row's padding is its leading zeros; pad_lens
and positions are read back from the padded ids. Token 0 is a real token id too:
[[0, 5, 6], [7]] gives pad_lens [1, 2] and positions [0, 0, 1] for row 0 (should be [0, 2], [0, 1, 2]).
"""


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens): rows left-padded with 0 to the longest."""
    longest = max(len(row) for row in token_lists)
    ids = [[0] * (longest - len(row)) + list(row) for row in token_lists]
    pad_lens, positions = [], []
    for row in ids:
        pad = 0
        while pad < len(row) and row[pad] == 0:
            pad += 1
        pad_lens.append(pad)
        positions.append([0] * pad + list(range(len(row) - pad)))
    return ids, positions, pad_lens
