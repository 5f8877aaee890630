"""Misconception: filtering in place saves a [B, V] allocation and the caller only uses the
result. The returned values are right, but probs itself is zeroed and renormalized (and the
result is probs, not a new tensor): probs [[0.6, 0.3, 0.1]], top_p 0.5 leaves probs [[1, 0, 0]]."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, idx = probs.sort(dim=-1, descending=True)
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    drop = before >= top_p[:, None]
    drop[:, 0] = False
    # back to vocabulary order, then filter the caller's tensor directly
    drop_vocab = torch.zeros_like(drop).scatter_(-1, idx, drop)
    probs.masked_fill_(drop_vocab, 0.0)
    probs.div_(probs.sum(dim=-1, keepdim=True))
    return probs
