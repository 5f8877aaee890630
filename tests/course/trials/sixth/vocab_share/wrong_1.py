"""Misconception: the vocabulary is balanced over the ranks as torch.tensor_split does
(the first vocab % n ranks get one row more), then padded to ceil(vocab / n). Ranges
shift when n does not divide vocab: vocab 10 on 4 ranks gives rank 3 ids 8..10, not 9..10.
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
    base, extra = divmod(vocab, n)
    start = rank * base + min(rank, extra)
    end = start + base + (1 if rank < extra else 0)
    rows = torch.zeros(share, weight.shape[1], dtype=weight.dtype, device=weight.device)
    rows[:end - start] = weight[start:end]
    return start, end, nn.Parameter(rows, requires_grad=False)
