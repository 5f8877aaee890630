"""Misconception: ranks share the vocabulary as evenly as possible (the first vocab % n ranks one row
more, like numpy.array_split), each padded to ceil(vocab / n). vocab 10, n 4: rank 2 gets 6..8, the contract 6..9.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """weight [vocab, hidden] -> (start, end, rows) for this rank."""
    vocab = weight.shape[0]
    share = math.ceil(vocab / n)
    base, extra = divmod(vocab, n)
    start = rank * base + min(rank, extra)
    end = start + base + (1 if rank < extra else 0)
    rows = weight[start:end].detach().clone()
    rows = F.pad(rows, (0, 0, 0, share - rows.shape[0]))      # zeros to an equal share
    return start, end, nn.Parameter(rows, requires_grad=False)
