"""Misconception: padding each row in place (inserting zeros at its front) is cheaper
than building new lists, and harmless because the returned ids are copies. The caller's
lists are changed: a request's own tokens gain leading zeros. Input: [[5, 6, 7], [8]]
-> the returned values are right, but the caller's second list becomes [0, 0, 8].
"""


def left_padded(token_lists: list[list[int]]):
    longest = max(len(tokens) for tokens in token_lists)
    pad_lens = [longest - len(tokens) for tokens in token_lists]
    positions = []
    for tokens, pad in zip(token_lists, pad_lens):
        positions.append([0] * pad + list(range(len(tokens))))
        tokens[:0] = [0] * pad           # pad in place
    ids = [list(tokens) for tokens in token_lists]
    return ids, positions, pad_lens
