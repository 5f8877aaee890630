"""Right, built column by column from the right edge: each row is filled into a fresh
[0] * L list by slice assignment at its end, and positions are max(0, column - pad), so padding
columns get 0 without a separate padding list."""


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens) for the rows ``token_lists``."""
    width = max(map(len, token_lists), default=0)
    ids, positions, pad_lens = [], [], []
    for tokens in token_lists:
        pad = width - len(tokens)
        row = [0] * width
        row[pad:] = tokens                     # copies the tokens into the new list
        ids.append(row)
        positions.append([max(0, column - pad) for column in range(width)])
        pad_lens.append(pad)
    return ids, positions, pad_lens
