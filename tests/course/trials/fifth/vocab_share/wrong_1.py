"""Misconception: the vocabulary is spread as evenly as possible (the first vocab % n ranks
one row more, as torch.tensor_split does), each share padded to ceil(vocab / n). Right when
n divides vocab; for vocab=10, n=4 rank 3 gets 8..10, not 9..10 (the gathered logits shift)."""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """This rank's token ids [start, end) and its rows, padded (see the stub's contract)."""
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    base, extra = divmod(vocab, n)
    start = rank * base + min(rank, extra)
    end = start + base + (1 if rank < extra else 0)
    rows = torch.zeros(share, hidden, dtype=weight.dtype, device=weight.device)
    rows[:end - start] = weight.detach()[start:end]
    return start, end, nn.Parameter(rows, requires_grad=False)
