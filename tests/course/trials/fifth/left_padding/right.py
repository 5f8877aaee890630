"""Right: builds each row right to left (reversed tokens and a countdown of positions, then
padded on the right and flipped back) instead of prepending padding; copies every row, so
the results never share a list with the caller's, and the caller's lists are untouched."""


def left_padded(token_lists: list[list[int]]):
    width = max((len(tokens) for tokens in token_lists), default=0)
    ids, positions, pad_lens = [], [], []
    for tokens in token_lists:
        pad = width - len(tokens)
        backwards = list(reversed(tokens)) + [0] * pad
        places = list(range(len(tokens) - 1, -1, -1)) + [0] * pad
        ids.append(backwards[::-1])
        positions.append(places[::-1])
        pad_lens.append(pad)
    return ids, positions, pad_lens
