"""Misconception: slicing rows out of weight makes a new tensor; padding (torch.cat)
is only needed for a short last share, so a full share is returned as weight[start:end]
itself, a view that keeps the whole table alive: vocab=8, n=2, rank 0 shares weight's storage."""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """This rank's token ids [start, end) and its rows, padded (see the stub's contract)."""
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    rows = weight.detach()[start:end]
    if end - start < share:                       # a short last share: pad with zeros
        pad = torch.zeros(share - (end - start), hidden, dtype=weight.dtype, device=weight.device)
        rows = torch.cat([rows, pad])
    return start, end, nn.Parameter(rows, requires_grad=False)
