"""Misconception: like keep_top_k, find the probability at the set's edge and keep every
token at least that likely. Ties at the edge then all stay: probs [0.4, 0.2, 0.2, 0.2],
top_p 0.5 keeps all four tokens where the set has two."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, _ = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    size = (before < top_p[:, None].to(probs.dtype)).sum(dim=-1).clamp(min=1)   # the set's size
    edge = sorted_probs.gather(-1, (size - 1)[:, None])                         # its least likely member
    kept = probs.masked_fill(probs < edge, 0.0)
    return kept / kept.sum(dim=-1, keepdim=True)
