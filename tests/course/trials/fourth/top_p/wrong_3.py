"""Misconception: the sampler owns probs, so it is fine to filter it in place (the hint's
scatter_, straight into probs). The result is right but the caller's probs is overwritten
with the filtered, renormalised values: any call with top_p < 1 shows it."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    drop = before >= top_p.to(probs.dtype)[:, None]
    drop[:, 0] = False
    probs.scatter_(-1, order, sorted_probs.masked_fill(drop, 0.0))
    probs.div_(probs.sum(dim=-1, keepdim=True))
    return probs
