"""Misconception: "reaches top_p" read as "exceeds top_p": a token is dropped only when
the mass sorted before it is strictly above top_p. Goes wrong when a prefix sums to
top_p exactly: probs [0.5, 0.25, 0.25], top_p 0.5 keeps two tokens instead of one."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop = before > top_p[:, None].to(probs.dtype)
    drop[:, 0] = False
    sorted_probs = sorted_probs.masked_fill(drop, 0.0)
    kept = torch.zeros_like(probs).scatter_(-1, order, sorted_probs)
    return kept / kept.sum(dim=-1, keepdim=True)
