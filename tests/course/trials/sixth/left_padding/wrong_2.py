"""Misconception: padding the rows where they are is fine, since the batch owns them. The
caller's lists get the zeros inserted at their front (a request's all_token_ids grows):
[[5, 6, 7], [8]] leaves the caller's second list as [0, 0, 8]."""


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens) for the rows ``token_lists``."""
    longest = max((len(tokens) for tokens in token_lists), default=0)
    ids, positions, pad_lens = [], [], []
    for tokens in token_lists:
        pad = longest - len(tokens)
        positions.append([0] * pad + list(range(len(tokens))))
        tokens[:0] = [0] * pad
        ids.append(list(tokens))
        pad_lens.append(pad)
    return ids, positions, pad_lens
