"""Misconception: the vocabulary is balanced as torch.tensor_split does (first ranks one row longer), then padded.
Right when n divides the vocabulary; vocab 10 on 4 ranks gives rank 2 ids 6..8, not 6..9 (ranges of ceil(vocab/n)).
"""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """See the stub: (start, end, rows) of this rank's padded share of the vocabulary."""
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    sizes = [len(part) for part in torch.tensor_split(torch.arange(vocab), n)]
    start = sum(sizes[:rank])
    end = start + sizes[rank]
    rows = torch.zeros(share, hidden, dtype=weight.dtype, device=weight.device)
    rows[:end - start] = weight[start:end]
    return start, end, nn.Parameter(rows, requires_grad=False)
