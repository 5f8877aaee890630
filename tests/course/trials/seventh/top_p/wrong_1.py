"""Misconception: keep the tokens whose *inclusive* cumulative probability stays within
top_p (cumsum <= top_p, the best one always kept), i.e. forget to shift the cumsum by
one. That set usually falls short of top_p: the token that makes the mass *reach* top_p
must stay too. Input: probs [[0.5, 0.25, 0.25]], top_p [0.6] -> the smallest set
reaching 0.6 is {0.5, 0.25}, giving [[2/3, 1/3, 0]]; this keeps only the first token,
giving [[1, 0, 0]].
"""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    cumulative = sorted_probs.cumsum(dim=-1)
    keep = cumulative <= top_p[:, None].to(probs.dtype)
    keep[:, 0] = True
    kept_sorted = torch.where(keep, sorted_probs, torch.zeros_like(sorted_probs))
    kept = torch.zeros_like(probs).scatter(-1, order, kept_sorted)
    return kept / kept.sum(dim=-1, keepdim=True)
