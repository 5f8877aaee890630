"""Misconception: only a short share needs a new tensor (for the zero padding); a full share
can be the slice itself. When n divides the vocabulary (or for every rank but the last) rows is a
view into weight and keeps the whole table alive: vocab=8, n=2 shares weight's storage."""
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
    vocab, hidden = weight.shape
    share = -(-vocab // n)
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    rows = weight[start:end]
    if end - start < share:
        padding = rows.new_zeros(share - (end - start), hidden)
        rows = torch.cat([rows, padding])
    return start, end, nn.Parameter(rows, requires_grad=False)
