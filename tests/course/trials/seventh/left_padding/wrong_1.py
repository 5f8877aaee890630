"""Misconception: a row that is already as long as the longest needs no padding, so it
can be handed back as it is instead of copied ("no work, no copy"). The contract says
every returned list is new: the longest row's ids list here *is* the caller's list
(a request's all_token_ids, which it keeps appending to, so the batch's ids change under
it). Input: [[5, 6, 7], [8]] -> values are right, but ids[0] is token_lists[0].
"""


def left_padded(token_lists: list[list[int]]):
    longest = max(len(tokens) for tokens in token_lists)
    ids, positions, pad_lens = [], [], []
    for tokens in token_lists:
        pad = longest - len(tokens)
        pad_lens.append(pad)
        ids.append(tokens if pad == 0 else [0] * pad + tokens)
        positions.append([0] * pad + list(range(len(tokens))))
    return ids, positions, pad_lens
