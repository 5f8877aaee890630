"""Misconception: split the vocabulary as evenly as possible (torch.tensor_split's ranges,
the remainder spread over the first ranks) and only pad to ceil(vocab / n). Same ranges
when n divides vocab; for vocab=10, n=4 rank 2 gets (6, 8) instead of (6, 9) (shares 3,3,2,2)."""
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
    share = (vocab + n - 1) // n
    base, extra = divmod(vocab, n)
    start = rank * base + min(rank, extra)
    end = start + base + (1 if rank < extra else 0)
    rows = torch.zeros(share, hidden, dtype=weight.dtype, device=weight.device)
    rows[:end - start] = weight[start:end].detach()
    return start, end, nn.Parameter(rows, requires_grad=False)
