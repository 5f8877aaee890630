"""Right, built column by column from the right edge: each row is reversed, read at
columns 0..L-1 (missing ones are padding), and reversed back; positions count down from
the row's last token. Nothing is shared with or written to the caller's lists."""
from itertools import zip_longest


def left_padded(token_lists: list[list[int]]):
    rows = [list(tokens) for tokens in token_lists]
    width = max(map(len, rows), default=0)
    ids, positions, pad_lens = [], [], []
    for row in rows:
        n = len(row)
        # Right-aligned: column c (from the right) holds token n-1-c, or padding.
        from_right = [t for t, _ in zip_longest(reversed(row), range(width), fillvalue=0)]
        ids.append(from_right[::-1])
        positions.append([max(n - 1 - c, 0) if c < n else 0 for c in range(width)][::-1])
        pad_lens.append(width - n)
    return ids, positions, pad_lens
