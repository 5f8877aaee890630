"""Misconception: the padding buffer is made with torch.zeros(share, hidden) and filled, so it
silently takes torch's default dtype: rows come back fp32 for an fp16/bf16 weight (values
right after casting). weight fp16 [10, 4], n=4: rows.dtype is float32, not float16."""
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
    rows = torch.zeros(share, hidden, device=weight.device)
    with torch.no_grad():
        rows[:end - start] = weight[start:end]
    return start, end, nn.Parameter(rows, requires_grad=False)
