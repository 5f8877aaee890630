"""Misconception: "reaches top_p" read as "exceeds top_p", so a token is dropped only when the mass
sorted before it is strictly above top_p. Goes wrong when that mass meets top_p exactly:
probs [0.5, 0.25, 0.25], top_p 0.5 keeps two tokens instead of one."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """probs [B, V], top_p [B]: keep each row's nucleus, renormalized (new tensor)."""
    sorted_p, order = probs.sort(dim=-1, descending=True)
    before = sorted_p.cumsum(dim=-1) - sorted_p          # mass of the tokens sorted before
    keep_sorted = before <= top_p[:, None]
    keep_sorted[:, 0] = True
    keep = torch.zeros_like(keep_sorted).scatter_(-1, order, keep_sorted)
    kept = probs.masked_fill(~keep, 0.0)
    return kept / kept.sum(dim=-1, keepdim=True)
