"""Right: no scatter of the sorted values back into place. It decides in sorted order
which ranks stay (those whose strictly-better mass is still below top_p, and rank 0
always), turns the sort order into each vocabulary token's rank (the inverse
permutation), gathers the keep/drop decision by rank, and zeroes the rest with
torch.where in vocabulary order; then renormalizes. Ties are broken by the sort's
order, so the set has the contract's size. A new tensor; probs and top_p are left
alone.
"""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_by_rank = before < top_p.unsqueeze(-1)
    keep_by_rank[..., 0] = True
    width = probs.shape[-1]
    ranks = torch.empty_like(order)
    ranks.scatter_(-1, order, torch.arange(width, device=probs.device).expand_as(order).contiguous())
    keep = keep_by_rank.gather(-1, ranks)
    kept = torch.where(keep, probs, torch.zeros((), dtype=probs.dtype, device=probs.device))
    return kept / kept.sum(dim=-1, keepdim=True)
