"""Misconception: the sampler throws probs away after filtering, so it is fine (and
saves memory) to zero the dropped tokens and renormalize in place, returning probs
itself. The values are right, but the contract says probs must stay as it was and the
result be a new tensor. Input: probs [[0.5, 0.25, 0.25]], top_p [0.5] -> returns
[[1, 0, 0]] as it should, but the caller's probs now also reads [[1, 0, 0]] and the
returned tensor is the same object.
"""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    dropped_sorted = mass_before >= top_p[:, None]
    dropped_sorted[:, 0] = False
    # Back to vocabulary order, then zero those tokens in probs directly.
    dropped = torch.zeros_like(dropped_sorted).scatter(-1, order, dropped_sorted)
    probs.masked_fill_(dropped, 0.0)
    probs.div_(probs.sum(dim=-1, keepdim=True))
    return probs
