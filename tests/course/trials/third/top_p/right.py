"""Right, without scatter_: each token's rank in its row comes from argsort of the descending
argsort (the inverse permutation); a row keeps its first k ranks, k = how many exclusive prefix sums
stay below top_p (at least 1). Ties are split by the sort's order, so exactly k tokens stay."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """Zero every token outside each row's nucleus and renormalize."""
    order = torch.argsort(probs, dim=-1, descending=True, stable=True)
    rank = torch.argsort(order, dim=-1)                     # rank[i] = where token i sorts
    sorted_probs = probs.gather(-1, order)
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    # tokens whose predecessors have not yet reached top_p; the best one always counts
    k = (before < top_p[:, None].to(before.dtype)).sum(dim=-1).clamp(min=1)
    kept = torch.where(rank < k[:, None], probs, torch.zeros((), dtype=probs.dtype, device=probs.device))
    return kept / kept.sum(dim=-1, keepdim=True)
