"""Right, without scatter: the keep/drop decision is made in sorted order and read back
into vocabulary order by gathering at each token's rank (the inverse permutation,
argsort of the sort order); the kept probs are then picked with torch.where."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    limit = top_p.to(probs.device).reshape(-1, 1)
    keep_sorted = mass_before < limit             # predecessors have not reached top_p yet
    keep_sorted[:, :1] = True                     # the best token survives any top_p
    rank = order.argsort(dim=-1)                  # rank[b, i]: where token i sits when sorted
    keep = keep_sorted.gather(-1, rank)
    kept = torch.where(keep, probs, torch.zeros((), dtype=probs.dtype, device=probs.device))
    return kept / kept.sum(dim=-1, keepdim=True)
