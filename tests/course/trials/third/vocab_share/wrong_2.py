"""Misconception: nn.Parameter(...) makes its own copy, and only a padded share needs new memory.
When n divides the vocabulary the rows are a view into weight (same storage): vocab 8, n 2.
"""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """weight [vocab, hidden] -> (start, end, rows) for this rank."""
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    rows = weight.detach()[start:end]
    if rows.shape[0] < share:                 # the short last share: pad it with zeros
        pad = torch.zeros(share - rows.shape[0], hidden, dtype=weight.dtype, device=weight.device)
        rows = torch.cat([rows, pad])
    return start, end, nn.Parameter(rows, requires_grad=False)
