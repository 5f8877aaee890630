"""Misconception: find the probability of the last token the nucleus needs and keep
every token at least that likely (a threshold, no scatter). Ties at the edge all stay,
so the set grows: probs [0.4, 0.3, 0.3], top_p 0.5 keeps 3 tokens instead of 2."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    needed = (before < top_p.to(probs.dtype)[:, None]).sum(dim=-1).clamp(min=1)   # set size
    threshold = sorted_probs.gather(-1, (needed - 1)[:, None])                     # its smallest prob
    kept = torch.where(probs >= threshold, probs, torch.zeros_like(probs))
    return kept / kept.sum(dim=-1, keepdim=True)
