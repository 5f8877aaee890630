"""Right: builds each row by concatenating a fresh padding list with a fresh copy of
the row (ids) or of range(len(row)) (positions), rather than computing each column's
position as max(0, column - pad). All lists are new; the caller's are only read. An
empty batch raises ValueError (max of nothing), as the engine's does.
"""


def left_padded(token_lists: list[list[int]]):
    lengths = [len(tokens) for tokens in token_lists]
    longest = max(lengths)
    pad_lens, ids, positions = [], [], []
    for tokens, length in zip(token_lists, lengths):
        pad = longest - length
        pad_lens.append(pad)
        ids.append([0] * pad + [token for token in tokens])
        positions.append([0] * pad + list(range(length)))
    return ids, positions, pad_lens
