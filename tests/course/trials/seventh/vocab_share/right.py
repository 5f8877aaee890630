"""Right: the rank's range is found by clamping both ends of
[rank * share, (rank + 1) * share) to the vocabulary with sorted() on a
triple instead of min(), and the rows are built with torch.cat of a cloned
slice and a block of zeros (never an in-place write into a zero tensor), so
the result always owns its memory, even when the share needs no padding; it
is made under torch.no_grad() so a weight that requires grad gives a plain
leaf, frozen."""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    start = sorted((0, rank * share, vocab))[1]
    end = sorted((start, (rank + 1) * share, vocab))[1]
    with torch.no_grad():
        mine = weight[start:end].clone()
        padding = torch.zeros(share - (end - start), hidden, dtype=weight.dtype,
                              device=weight.device)
        rows = torch.cat([mine, padding], dim=0)
    return start, end, nn.Parameter(rows, requires_grad=False)
