"""Misconception: pad the rows where they are (slice-assign the padding into each list) to
save copying. The returned values are right, but the caller's lists now carry the padding:
the engine passes request.all_token_ids, so [[5, 6, 7], [8]] leaves the second prompt [0, 0, 8]."""


def left_padded(token_lists: list[list[int]]):
    width = max((len(tokens) for tokens in token_lists), default=0)
    positions, pad_lens = [], []
    for tokens in token_lists:
        pad = width - len(tokens)
        positions.append([0] * pad + list(range(len(tokens))))
        pad_lens.append(pad)
        tokens[:0] = [0] * pad          # in place
    return token_lists, positions, pad_lens
