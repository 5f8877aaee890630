"""Misconception: "nn.Parameter copies the tensor it wraps, like a module's
weight does when loaded", so when a share needs no padding the slice
weight[start:end] is wrapped as it is, and only a short last share is copied
into a padded buffer. nn.Parameter does not copy: the result is a view that
keeps the whole table alive (and changes with it), which is what the
contract forbids. Shapes, values and dtype are all right.

Concrete input: weight = torch.randn(8, 4), rank 0, n 2: this returns rows
sharing weight's storage (rows.data_ptr() == weight.data_ptr()); writing
weight[0] changes rows[0], and deleting weight frees nothing.
"""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    vocab = weight.shape[0]
    share = math.ceil(vocab / n)
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    if end - start == share:
        rows = weight[start:end]                      # no padding needed
    else:
        rows = weight.new_zeros(share, weight.shape[1])
        rows[:end - start] = weight[start:end]
    return start, end, nn.Parameter(rows.detach(), requires_grad=False)
