"""Misconception: the sampler's probs are a scratch tensor, so filtering them in place is fine and
saves a copy. Values returned are right, but the caller's probs are zeroed and renormalized too
(and the result is the same tensor): any call, e.g. probs [[0.6, 0.3, 0.1]], top_p [0.5]."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """probs [B, V], top_p [B]: keep each row's nucleus, renormalized."""
    sorted_p, order = probs.sort(dim=-1, descending=True)
    before = sorted_p.cumsum(dim=-1) - sorted_p
    drop_sorted = before >= top_p[:, None]
    drop_sorted[:, 0] = False                            # the best token always stays
    drop = torch.zeros_like(drop_sorted).scatter_(-1, order, drop_sorted)
    probs.masked_fill_(drop, 0.0)
    probs.div_(probs.sum(dim=-1, keepdim=True))
    return probs
