"""Right: allocates the padded share as zeros in weight's dtype and device first and copies the
rank's rows into it (no slicing-then-padding, no torch.cat), clamping both ends of the range to the vocabulary.
"""
import torch
from torch import nn


def vocab_share(weight, rank: int, n: int):
    """weight [vocab, hidden] -> (start, end, rows [ceil(vocab / n), hidden]) of rank ``rank``."""
    vocab, hidden = weight.shape
    share = -(-vocab // n)                       # ceil without floats
    start = min(rank * share, vocab)
    end = min(start + share, vocab)
    rows = torch.zeros((share, hidden), dtype=weight.dtype, device=weight.device)
    if end > start:
        rows[: end - start].copy_(weight.detach()[start:end])
    return start, end, nn.Parameter(rows, requires_grad=False)
