"""Misconception: torch.zeros(share, hidden) then filling it keeps weight's dtype. It is float32:
an fp16 or bf16 table gives fp32 rows (twice the memory, and a dtype the model does not run).
"""
import math

import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """weight [vocab, hidden] -> (start, end, rows) for this rank."""
    vocab, hidden = weight.shape
    share = math.ceil(vocab / n)
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    rows = torch.zeros(share, hidden, device=weight.device)    # padding rows stay zero
    rows[: end - start] = weight.detach()[start:end]
    return start, end, nn.Parameter(rows, requires_grad=False)
