"""Misconception: the batch's first row is its longest (as the docstring's example, and as
run_batch's ``len(ids[0])`` suggests), so L is taken from it. Goes wrong when a later row
is longer: [[8], [5, 6, 7]] gives rows of lengths 1 and 3 and pad_lens [0, -2]."""


def left_padded(token_lists: list[list[int]]):
    width = len(token_lists[0]) if token_lists else 0
    ids, positions, pad_lens = [], [], []
    for tokens in token_lists:
        pad = width - len(tokens)
        ids.append([0] * pad + list(tokens))
        positions.append([0] * pad + list(range(len(tokens))))
        pad_lens.append(pad)
    return ids, positions, pad_lens
