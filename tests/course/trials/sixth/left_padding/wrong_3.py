"""Misconception: the first row is the longest (as in the docstring's example, and as the engine
reads len(ids[0])), so L is taken from it. Goes wrong when a later row is longer:
[[8], [5, 6, 7]] gives a negative pad, rows of different lengths and pad_lens [0, -2]."""


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens) for the rows ``token_lists``."""
    if not token_lists:
        return [], [], []
    longest = len(token_lists[0])
    pad_lens = [longest - len(tokens) for tokens in token_lists]
    ids = [[0] * pad + list(tokens) for pad, tokens in zip(pad_lens, token_lists)]
    positions = [[0] * pad + list(range(len(tokens)))
                 for pad, tokens in zip(pad_lens, token_lists)]
    return ids, positions, pad_lens
