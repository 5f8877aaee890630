"""Misconception: padding needs a new tensor, but a share that is already full can be
the slice itself; so when n divides vocab, rows is a view sharing weight's storage (the
whole table stays alive). E.g. vocab 8 on 2 ranks: rows.data_ptr() lies inside weight's.
"""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """weight [vocab, hidden]. Return (start, end, rows): this rank's token ids
    are start <= id < end, and rows [share, hidden] holds their rows of weight,
    where share = ceil(vocab / n) for every rank; rows past end - start are zeros.
    Ranks take consecutive ranges in rank order; a rank past the vocabulary's
    end has start == end == vocab. Return rows as a frozen nn.Parameter
    (requires_grad=False) in weight's dtype, holding memory of its own: not a
    view into weight, so that a rank keeps only its share once the whole table
    is dropped.
    """
    vocab = weight.shape[0]
    share = math.ceil(vocab / n)
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    if end - start == share:
        rows = weight.detach()[start:end]                 # already the right shape
    else:
        rows = torch.zeros(share, weight.shape[1], dtype=weight.dtype, device=weight.device)
        rows[:end - start] = weight.detach()[start:end]
    return start, end, nn.Parameter(rows, requires_grad=False)
