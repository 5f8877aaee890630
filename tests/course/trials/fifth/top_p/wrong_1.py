"""Misconception: a token is dropped only once the mass before it *exceeds* top_p (strict >),
so a boundary met exactly keeps one token too many. probs [0.5, 0.25, 0.25], top_p 0.5
keeps two tokens instead of one."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, idx = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    drop = before > top_p[:, None]
    drop[:, 0] = False
    sorted_probs = sorted_probs.masked_fill(drop, 0.0)
    out = torch.zeros_like(probs).scatter_(-1, idx, sorted_probs)
    return out / out.sum(dim=-1, keepdim=True)
