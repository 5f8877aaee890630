"""Misconception: only the short last share needs a new tensor; a full share can just be
the slice weight[start:end]. That Parameter aliases the whole table (it keeps all of it
alive, and writing one writes the other): vocab=8, n=2, rank 0's rows share weight's storage."""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """weight [vocab, hidden]. Return (start, end, rows): this rank's token ids
    are start <= id < end, and rows [share, hidden] holds their rows of weight,
    where share = ceil(vocab / n) for every rank; rows past end - start are zeros.
    Ranks take consecutive ranges in rank order; a rank past the vocabulary's
    end has start == end == vocab. Return rows as a frozen nn.Parameter
    (requires_grad=False).
    """
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    rows = weight.detach()[start:end]
    if end - start < share:                          # the last share: pad it with zeros
        padding = rows.new_zeros(share - (end - start), hidden)
        rows = torch.cat([rows, padding])
    return start, end, nn.Parameter(rows, requires_grad=False)
