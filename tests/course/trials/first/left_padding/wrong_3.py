"""Misconception: the first row is the longest (as in the docstring's example), so L is
taken from it. Wrong on [[8], [5, 6, 7]]: L = 1, the second row is not padded and
gets pad_len -2, and the "rectangle" is ragged.
"""


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens): rows left-padded with 0 to the longest."""
    longest = len(token_lists[0])
    ids, positions, pad_lens = [], [], []
    for row in token_lists:
        pad = longest - len(row)
        ids.append([0] * pad + list(row))
        positions.append([0] * pad + list(range(len(row))))
        pad_lens.append(pad)
    return ids, positions, pad_lens
