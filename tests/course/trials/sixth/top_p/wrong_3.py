"""Misconception: top_p > 0 and the exclusive sum before the best token is 0, so the best token
always survives by itself and needs no guard. Goes wrong when top_p rounds to 0 (top_p=1e-50 in
SamplingParams becomes 0.0 in fp32): every token is dropped and the row is 0/0 = nan."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """probs [B, V], top_p [B]: keep each row's nucleus, renormalized (new tensor)."""
    sorted_p, order = probs.sort(dim=-1, descending=True)
    before = sorted_p.cumsum(dim=-1) - sorted_p
    sorted_p = sorted_p.masked_fill(before >= top_p[:, None], 0.0)
    kept = torch.zeros_like(probs).scatter_(-1, order, sorted_p)
    return kept / kept.sum(dim=-1, keepdim=True)
