"""Misconception: a row that needs no padding can be returned as it is, saving a copy. The longest
row of ids is then the caller's own list (a request's all_token_ids), so appending to one changes
the other: [[5, 6, 7], [8]] returns ids[0] is token_lists[0]."""


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens) for the rows ``token_lists``."""
    longest = max((len(tokens) for tokens in token_lists), default=0)
    ids, positions, pad_lens = [], [], []
    for tokens in token_lists:
        pad = longest - len(tokens)
        ids.append(tokens if pad == 0 else [0] * pad + tokens)
        positions.append([0] * pad + list(range(len(tokens))))
        pad_lens.append(pad)
    return ids, positions, pad_lens
