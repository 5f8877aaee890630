"""Misconception: a token is dropped only once the tokens before it *exceed* top_p (strict >),
so a set that reaches top_p exactly keeps one token too many.
Goes wrong: probs [0.5, 0.25, 0.25], top_p 0.75 -> keeps 3 tokens instead of 2."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """Zero every token outside each row's nucleus and renormalize."""
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop = before > top_p[:, None].to(before.dtype)
    drop[:, 0] = False
    sorted_probs = sorted_probs.masked_fill(drop, 0.0)
    kept = torch.zeros_like(probs).scatter_(-1, order, sorted_probs)
    return kept / kept.sum(dim=-1, keepdim=True)
