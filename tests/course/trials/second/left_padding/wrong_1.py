"""Misconception: pad the prompts where they are (insert the zeros in place) and return them:
the values are right, but the caller's lists are changed. StaticEngine passes each request's
all_token_ids, so [[5, 6, 7], [8]] leaves the second request's tokens as [0, 0, 8]."""


def left_padded(token_lists: list[list[int]]):
    longest = max((len(tokens) for tokens in token_lists), default=0)
    positions, pad_lens = [], []
    for tokens in token_lists:
        pad = longest - len(tokens)
        tokens[:0] = [0] * pad
        positions.append([0] * pad + list(range(len(tokens) - pad)))
        pad_lens.append(pad)
    return token_lists, positions, pad_lens
