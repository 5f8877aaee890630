"""Misconception: the kept tokens hold about top_p of the mass, so "renormalize" means
divide by top_p. Rows no longer sum to 1 (sampling by argmax(probs / noise) is unchanged,
so an engine-level check sees nothing): probs [0.6, 0.3, 0.1], top_p 0.5 gives [1.2, 0, 0].
"""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """probs [B, V], top_p [B]: keep each row's nucleus, renormalized."""
    sorted_probs, idx = torch.sort(probs, dim=-1, descending=True)
    above = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop_sorted = above >= top_p[:, None]
    drop_sorted[:, 0] = False
    drop = torch.zeros_like(drop_sorted).scatter_(-1, idx, drop_sorted)
    kept = probs.masked_fill(drop, 0.0)
    return kept / top_p[:, None]
