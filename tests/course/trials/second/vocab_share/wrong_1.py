"""Misconception: only `end` needs clamping to the vocabulary; a rank past its end gets start = rank * share.
Works in the embedding (no id matches), but breaks start == end == vocab: vocab 5 on 4 ranks, rank 3 gives (6, 5).
"""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """See the stub: (start, end, rows) of this rank's padded share of the vocabulary."""
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    start = rank * share
    end = min(start + share, vocab)
    rows = torch.zeros(share, hidden, dtype=weight.dtype, device=weight.device)
    if end > start:
        rows[:end - start] = weight[start:end]
    return start, end, nn.Parameter(rows, requires_grad=False)
