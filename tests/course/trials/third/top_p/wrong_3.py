"""Misconception: the sampler never reads probs again, so filtering it in place (masked_fill_,
div_) is a free saving; the caller's tensor is overwritten.
Goes wrong: probs [[0.6, 0.4]], top_p 0.5 -> the returned tensor is right, but the argument now holds [1, 0]."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """Zero every token outside each row's nucleus and renormalize."""
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    drop_sorted = before >= top_p[:, None].to(before.dtype)
    drop_sorted[:, 0] = False
    drop = torch.zeros_like(drop_sorted).scatter_(-1, order, drop_sorted)
    probs.masked_fill_(drop, 0.0)
    return probs.div_(probs.sum(dim=-1, keepdim=True))
