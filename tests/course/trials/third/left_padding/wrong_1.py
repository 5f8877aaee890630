"""Misconception: pad each row in place (``row[:0] = [0] * pad``) to avoid copying; the caller's
token lists (the requests' all_token_ids) come back with padding zeros stuck to their front.
Goes wrong: [[5, 6, 7], [8]] -> results right, but the argument becomes [[5, 6, 7], [0, 0, 8]]."""


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens) for the rows ``token_lists``."""
    longest = max((len(row) for row in token_lists), default=0)
    ids, positions, pad_lens = [], [], []
    for row in token_lists:
        pad = longest - len(row)
        positions.append([0] * pad + list(range(len(row))))
        row[:0] = [0] * pad
        ids.append(row)
        pad_lens.append(pad)
    return ids, positions, pad_lens
