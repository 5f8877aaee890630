"""Misconception: "only the end of the last range can run past the
vocabulary": end is clamped with min(.., vocab), start is left at
rank * share. When n does not divide the vocabulary so that whole ranks fall
past its end, such a rank gets start > vocab and end < start instead of
start == end == vocab (its rows, all padding, are right). The embedding
then tests ids >= start & ids < end, which is still empty, so runs pass; the
range returned is wrong.

Concrete input: vocab 5, n 4 (share 2), rank 3: the contract gives
(5, 5, zeros(2, hidden)); this gives (6, 5, zeros(2, hidden)).
"""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    vocab = weight.shape[0]
    share = math.ceil(vocab / n)
    start = rank * share
    end = min(start + share, vocab)
    rows = weight.new_zeros(share, weight.shape[1])
    count = max(0, end - start)
    rows[:count] = weight[start:start + count]
    return start, end, nn.Parameter(rows, requires_grad=False)
