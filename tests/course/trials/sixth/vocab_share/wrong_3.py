"""Misconception: only end needs clamping to the vocabulary; start stays rank x share.
A rank wholly past the end then gets start > end == vocab (an empty range, so lookups
still work): vocab 5 on 4 ranks gives rank 3 (6, 5), not (5, 5).
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
    start = rank * share
    end = min(start + share, vocab)
    rows = torch.zeros(share, weight.shape[1], dtype=weight.dtype, device=weight.device)
    if end > start:
        rows[:end - start] = weight[start:end]
    return start, end, nn.Parameter(rows, requires_grad=False)
