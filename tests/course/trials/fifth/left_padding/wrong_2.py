"""Misconception: a column's position is its index in the padded rectangle (padding counts
as part of the sequence, only masked), with padding columns at 0. [[5, 6, 7], [8]] gives
positions [[0, 1, 2], [0, 0, 2]] instead of [[0, 1, 2], [0, 0, 0]]."""


def left_padded(token_lists: list[list[int]]):
    width = max((len(tokens) for tokens in token_lists), default=0)
    ids, positions, pad_lens = [], [], []
    for tokens in token_lists:
        pad = width - len(tokens)
        ids.append([0] * pad + list(tokens))
        positions.append([0 if col < pad else col for col in range(width)])
        pad_lens.append(pad)
    return ids, positions, pad_lens
