"""Misconception: a token is dropped only once the tokens before it *exceed* top_p
(strict >), so a set that reaches top_p exactly keeps one token too many.
Goes wrong when a prefix sum equals top_p, e.g. probs [0.5, 0.25, 0.25], top_p 0.75."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs       # mass strictly before each token
    drop = before > top_p.to(probs.dtype)[:, None]
    drop[:, 0] = False                                        # the best token always stays
    kept_sorted = sorted_probs.masked_fill(drop, 0.0)
    kept = torch.zeros_like(probs).scatter_(-1, order, kept_sorted)
    return kept / kept.sum(dim=-1, keepdim=True)
