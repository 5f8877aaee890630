"""Right: counts, per row, the sorted tokens whose preceding mass is still below top_p (at
least 1: the set's size), then keeps a token when its rank (argsort of the sort order, the
inverse permutation) is below that count; no scatter. Sums in fp32 or wider."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    work = probs.to(torch.promote_types(probs.dtype, torch.float32))
    sorted_probs, order = work.sort(dim=-1, descending=True, stable=True)
    before = torch.cat([torch.zeros_like(sorted_probs[:, :1]),
                        sorted_probs.cumsum(dim=-1)[:, :-1]], dim=-1)
    limit = top_p.to(work.dtype).reshape(-1, 1)
    count = (before < limit).sum(dim=-1, keepdim=True).clamp(min=1)   # the set's size
    rank = order.argsort(dim=-1)                 # each token's place in the sorted order
    kept = torch.where(rank < count, work, torch.zeros_like(work))
    return (kept / kept.sum(dim=-1, keepdim=True)).to(probs.dtype)
