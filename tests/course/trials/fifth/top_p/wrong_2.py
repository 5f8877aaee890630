"""Misconception: top_p > 0, so the best token is always inside the set and needs no
special case. Wrong when top_p rounds to 0 in fp32 (SamplingParams(top_p=1e-50)): every
token is dropped and the row becomes nan instead of keeping the best token."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, idx = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    drop = before >= top_p[:, None]
    sorted_probs = sorted_probs.masked_fill(drop, 0.0)
    out = torch.zeros_like(probs).scatter_(-1, idx, sorted_probs)
    return out / out.sum(dim=-1, keepdim=True)
