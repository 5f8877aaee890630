"""Misconception: a batch's prompts come longest first (as in the docstring's example),
so the first row sets L. Unsorted rows break it: [[8], [5, 6, 7]] gives L = 1, a
negative pad (no padding) and ids [[8], [5, 6, 7]] that are not a rectangle."""


def left_padded(token_lists: list[list[int]]):
    if not token_lists:
        return [], [], []
    longest = len(token_lists[0])
    ids, positions, pad_lens = [], [], []
    for tokens in token_lists:
        pad = max(0, longest - len(tokens))
        ids.append([0] * pad + list(tokens))
        positions.append([0] * pad + list(range(len(tokens))))
        pad_lens.append(pad)
    return ids, positions, pad_lens
