"""Misconception: "shares should be as even as possible", so the vocabulary
is cut the way numpy.array_split / torch.tensor_split do: the first
vocab % n ranks get one row more, every rank has at most one row of padding,
and no rank is ever empty. Each rank still holds ceil(vocab / n) rows, but
the ranges are not rank * ceil(vocab / n) onwards: the padding lands in the
middle of the gathered logits (the head cuts only the end), and a rank past
the vocabulary's end under the contract gets real rows here.

Concrete input: vocab 10, n 4 (share 3): the contract gives ranges [0, 3),
[3, 6), [6, 9), [9, 10); this gives [0, 3), [3, 6), [6, 8), [8, 10).
"""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    vocab = weight.shape[0]
    share = math.ceil(vocab / n)
    base, extra = divmod(vocab, n)
    start = rank * base + min(rank, extra)
    end = start + base + (1 if rank < extra else 0)
    rows = weight.new_zeros(share, weight.shape[1])
    rows[:end - start] = weight[start:end]
    return start, end, nn.Parameter(rows, requires_grad=False)
