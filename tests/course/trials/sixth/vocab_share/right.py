"""Right: builds the padded share with one torch.cat of the slice and a block of zeros
(always a fresh tensor), with both range ends clamped to the vocabulary in one generator.
"""
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
    start, end = (min(edge, vocab) for edge in (rank * share, (rank + 1) * share))
    taken = weight.detach()[start:end]
    padding = weight.new_zeros(share - (end - start), hidden)
    rows = torch.cat([taken, padding], dim=0)
    return start, end, nn.Parameter(rows, requires_grad=False)
