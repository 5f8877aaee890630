"""Misconception: slicing weight and wrapping it in nn.Parameter makes the rank's own copy (only padding needs a new tensor).
When n divides the vocabulary, rows is a view into weight: vocab 8 on 2 ranks, rows shares weight's storage.
"""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """See the stub: (start, end, rows) of this rank's padded share of the vocabulary."""
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    rows = weight[start:end].detach()
    if end - start < share:                      # a short last share: pad with zeros
        padding = rows.new_zeros(share - (end - start), hidden)
        rows = torch.cat([rows, padding])
    return start, end, nn.Parameter(rows, requires_grad=False)
