"""Misconception: build the padded rectangle first, then read each row's padding back off
it as its leading zeros (padding is token 0). A prompt that itself starts with token 0 is
miscounted: [[0, 5, 6], [8]] gives pad_lens [1, 2] and positions [0, 0, 1] for row 0."""


def left_padded(token_lists: list[list[int]]):
    longest = max((len(tokens) for tokens in token_lists), default=0)
    ids = [[0] * (longest - len(tokens)) + list(tokens) for tokens in token_lists]
    pad_lens, positions = [], []
    for row in ids:
        pad = next((col for col, token in enumerate(row) if token != 0), len(row))
        pad_lens.append(pad)
        positions.append([0] * pad + list(range(len(row) - pad)))
    return ids, positions, pad_lens
