"""Misconception: padding the prompts means padding the given lists themselves, in place
(insert zeros at their front) and returning them. Output is right, but the caller's lists
(a request's all_token_ids) change: after [[5, 6, 7], [8]] the second list is [0, 0, 8].
"""


def left_padded(token_lists: list[list[int]]):
    """Returns (ids, positions, pad_lens): rows left-padded with 0 to the longest."""
    longest = max(len(row) for row in token_lists)
    pad_lens, positions = [], []
    for row in token_lists:
        pad = longest - len(row)
        row[:0] = [0] * pad
        pad_lens.append(pad)
        positions.append([0] * pad + list(range(longest - pad)))
    return token_lists, positions, pad_lens
