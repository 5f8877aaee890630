"""Misconception: a row that needs no padding can be returned as it is. Its ids row is the
caller's own list, so a later append to request.all_token_ids (as deliver does) also grows
ids[b]: for [[5, 6, 7], [8]], appending 9 to the first list makes ids[0] [5, 6, 7, 9]."""


def left_padded(token_lists: list[list[int]]):
    width = max((len(tokens) for tokens in token_lists), default=0)
    ids, positions, pad_lens = [], [], []
    for tokens in token_lists:
        pad = width - len(tokens)
        ids.append(tokens if pad == 0 else [0] * pad + tokens)
        positions.append([0] * pad + list(range(len(tokens))))
        pad_lens.append(pad)
    return ids, positions, pad_lens
