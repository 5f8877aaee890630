"""Misconception: pad each prompt where it lies (insert the zeros at the front of the
caller's lists) and return those lists. ids come out right, but the caller's token lists
(in the engine, each request's all_token_ids) now carry the padding: any row shorter than L."""


def left_padded(token_lists: list[list[int]]):
    longest = max((len(tokens) for tokens in token_lists), default=0)
    ids, positions, pad_lens = [], [], []
    for tokens in token_lists:
        pad = longest - len(tokens)
        tokens[:0] = [0] * pad            # pad on the left, in place
        ids.append(tokens)
        positions.append([0] * pad + list(range(longest - pad)))
        pad_lens.append(pad)
    return ids, positions, pad_lens
