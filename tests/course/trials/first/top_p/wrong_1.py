"""Misconception: "reaches top_p" read as "exceeds top_p": a token is dropped only when
the mass above it is strictly greater than top_p. Wrong on exact boundaries: probs
[0.5, 0.25, 0.125, 0.125], top_p 0.75 keeps three tokens; the contract keeps two.
"""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """probs [B, V], top_p [B]: keep each row's nucleus, renormalized."""
    sorted_probs, idx = torch.sort(probs, dim=-1, descending=True)
    above = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop_sorted = above > top_p[:, None]
    drop_sorted[:, 0] = False
    drop = torch.zeros_like(drop_sorted).scatter_(-1, idx, drop_sorted)
    kept = probs.masked_fill(drop, 0.0)
    return kept / kept.sum(dim=-1, keepdim=True)
