"""Chapter 2: left padding.

A static batch is a rectangle: every prompt padded on the left to the longest,
so every row's newest token sits in the last column. Check:
``python -m minicb check left_padding``.
"""


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens) for the rows ``token_lists``:

    - ids [B][L]: each row padded on the left with token 0 to the longest, L;
    - positions [B][L]: each column's position in its row's own sequence (its
      first real token is at 0); padding columns get position 0;
    - pad_lens [B]: how many padding columns each row has.

    Every list returned is new: the caller's lists (a request's own tokens, which
    it keeps appending to) are neither changed nor handed back.

    Example: [[5, 6, 7], [8]] gives ids [[5, 6, 7], [0, 0, 8]], positions
    [[0, 1, 2], [0, 0, 0]] and pad_lens [0, 2].
    """
    raise NotImplementedError
