"""Right: lays out all n ranges first (cumulative ends clamped to the vocabulary, as a
list over ranks) and picks this rank's, then fills a fresh zero table with index_copy_
rather than slicing, padding or cloning."""
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
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    edges = [min(k * share, vocab) for k in range(n + 1)]
    start, end = edges[rank], edges[rank + 1]
    table = torch.zeros(share, hidden, dtype=weight.dtype, device=weight.device)
    ids = torch.arange(start, end, device=weight.device)
    with torch.no_grad():
        table.index_copy_(0, ids - start, weight.detach().index_select(0, ids))
    return start, end, nn.Parameter(table, requires_grad=False)
