"""Right, with no zeros tensor to fill: the rank's rows are cut and padded in one F.pad call, the ids clamped
by min over a shared end point, and the result checked (not assumed) to hold its own storage, cloned if not.
"""
import torch
import torch.nn.functional as F
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """weight [vocab, hidden]. Return (start, end, rows): this rank's ids are
    start <= id < end; rows [ceil(vocab / n), hidden], zeros past end - start,
    a frozen Parameter of weight's dtype with memory of its own."""
    vocab = weight.shape[0]
    share = -(-vocab // n)
    start, end = (min(vocab, share * r) for r in (rank, rank + 1))
    rows = F.pad(weight.detach()[start:end], (0, 0, 0, share - (end - start)))
    if rows.untyped_storage().data_ptr() == weight.untyped_storage().data_ptr():
        rows = rows.clone()
    return start, end, nn.Parameter(rows, requires_grad=False)
