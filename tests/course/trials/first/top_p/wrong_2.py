"""Misconception: the best token needs no special case, since the mass above it (0) is
always below top_p. But top_p may round to 0 in fp32: SamplingParams(top_p=1e-50) gives
a top_p tensor of 0.0, the whole row is dropped and renormalizing gives nan.
"""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """probs [B, V], top_p [B]: keep each row's nucleus, renormalized."""
    sorted_probs, idx = torch.sort(probs, dim=-1, descending=True)
    above = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop_sorted = above >= top_p[:, None]
    drop = torch.zeros_like(drop_sorted).scatter_(-1, idx, drop_sorted)
    kept = probs.masked_fill(drop, 0.0)
    return kept / kept.sum(dim=-1, keepdim=True)
