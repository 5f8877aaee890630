"""Misconception: clamping the end to the vocabulary is enough; a rank past the end keeps
start = rank * share (its slice is empty anyway, and no id falls in [start, end)). Wrong
for vocab=10, n=8 (share 2), rank 7: returns start 14, end 10, not 10, 10."""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """This rank's token ids [start, end) and its rows, padded (see the stub's contract)."""
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    start = rank * share
    end = min(start + share, vocab)
    rows = torch.zeros(share, hidden, dtype=weight.dtype, device=weight.device)
    mine = weight.detach()[start:end]
    rows[:mine.shape[0]] = mine
    return start, end, nn.Parameter(rows, requires_grad=False)
