"""Correct. Differs from the obvious "[0] * pad + row": pads each row on the *right*
after reversing it, reads the rectangle column by column with zip_longest, and turns it
back; positions come from a column's distance to the row's first real token, floored at 0.
"""
from itertools import zip_longest


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens) for the rows ``token_lists``:

    - ids [B][L]: each row padded on the left with token 0 to the longest, L;
    - positions [B][L]: each column's position in its row's own sequence (its
      first real token is at 0); padding columns get position 0;
    - pad_lens [B]: how many padding columns each row has.
    """
    reversed_rows = [row[::-1] for row in token_lists]
    columns = list(zip_longest(*reversed_rows, fillvalue=0))     # newest column first
    width = len(columns)
    ids = [[columns[width - 1 - c][b] for c in range(width)]
           for b in range(len(token_lists))]
    pad_lens = [width - len(row) for row in token_lists]
    positions = [[max(0, c - pad) for c in range(width)] for pad in pad_lens]
    return ids, positions, pad_lens
