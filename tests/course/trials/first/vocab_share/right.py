"""Correct, written differently: the padded share is built by F.pad on a cloned slice
(no zeros-then-fill), and start and end both come from clamping rank * share and
(rank + 1) * share into [0, vocab], rather than end = min(start + share, vocab)."""
import torch
import torch.nn.functional as F
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """weight [vocab, hidden]. Return (start, end, rows): this rank's token ids
    are start <= id < end, and rows [share, hidden] holds their rows of weight,
    where share = ceil(vocab / n) for every rank; rows past end - start are zeros.
    Ranks take consecutive ranges in rank order; a rank past the vocabulary's
    end has start == end == vocab. Return rows as a frozen nn.Parameter
    (requires_grad=False).
    """
    vocab = weight.shape[0]
    share = -(-vocab // n)
    start, end = (max(0, min(vocab, bound)) for bound in (rank * share, (rank + 1) * share))
    mine = weight.detach()[start:end].clone()
    rows = F.pad(mine, (0, 0, 0, share - mine.shape[0]))          # zeros below, same dtype
    return start, end, nn.Parameter(rows, requires_grad=False)
