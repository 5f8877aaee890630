"""Right, without scatter: each row's set size k is counted on the sorted row, then every
token's rank (its place in a stable descending sort, found by inverting the permutation)
is compared with k; the mass before each token is summed in float64."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    rows, vocab = probs.shape
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    wide = sorted_probs.double()
    before = torch.cumsum(wide, dim=-1).roll(1, dims=-1)            # mass sorted before each token
    before[:, 0] = 0.0
    limit = top_p.to(device=probs.device, dtype=torch.float64)[:, None]
    size = (before < limit).sum(dim=-1).clamp(min=1)                # the best token always stays
    rank = torch.empty_like(order)
    rank[torch.arange(rows, device=probs.device)[:, None], order] = \
        torch.arange(vocab, device=probs.device).expand(rows, vocab)
    kept = torch.where(rank < size[:, None], probs, torch.zeros((), dtype=probs.dtype, device=probs.device))
    return kept / kept.sum(dim=-1, keepdim=True)
