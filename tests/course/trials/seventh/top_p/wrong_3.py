"""Misconception: find the probability of the last token the nucleus needs (the
cut-off value) and keep every token at least that likely. With ties at the edge this
keeps all the tied tokens, so the set is larger than the smallest one reaching top_p,
whose size the contract fixes. Input: probs [[0.4, 0.2, 0.2, 0.2]], top_p [0.5] -> the
smallest set has 2 tokens (0.4 + one 0.2), e.g. [[2/3, 1/3, 0, 0]]; this keeps all four
and returns probs unchanged.
"""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    needed = (mass_before < top_p[:, None]).sum(dim=-1).clamp(min=1)      # tokens in the set
    cutoff = sorted_probs.gather(-1, (needed - 1)[:, None])              # the smallest kept prob
    kept = torch.where(probs >= cutoff, probs, torch.zeros_like(probs))
    return kept / kept.sum(dim=-1, keepdim=True)
