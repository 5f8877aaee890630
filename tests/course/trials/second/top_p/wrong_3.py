"""Misconception: top_p is in (0, 1], so the best token (nothing sorted before it) always
passes "mass before it < top_p" and needs no special case. Goes wrong when top_p rounds
to 0 in fp32 (e.g. top_p 1e-50): every token is dropped and the row becomes nan."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep = before < top_p[:, None].to(probs.dtype)
    sorted_probs = sorted_probs * keep
    kept = torch.empty_like(probs).scatter_(-1, order, sorted_probs)
    return kept / kept.sum(dim=-1, keepdim=True)
