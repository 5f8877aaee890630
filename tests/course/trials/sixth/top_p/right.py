"""Right, without scattering values back: it counts each row's set size k from the sorted
prefix sums, ranks every token by inverting the sort permutation (argsort of the order), and
keeps the tokens of rank < k; masking the original probs keeps vocabulary order for free."""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """probs [B, V], top_p [B]: keep each row's nucleus, renormalized (new tensor)."""
    sorted_p, order = probs.sort(dim=-1, descending=True, stable=True)
    # Mass of the tokens sorted strictly before each one: a right shift of the prefix sums.
    before = torch.nn.functional.pad(sorted_p.cumsum(dim=-1)[:, :-1], (1, 0))
    # The set: every token whose predecessors have not reached top_p; at least the best one.
    size = (before < top_p[:, None]).sum(dim=-1).clamp(min=1)
    rank = order.argsort(dim=-1)                 # rank[b, v]: place of token v in row b's order
    kept = torch.where(rank < size[:, None], probs, torch.zeros((), dtype=probs.dtype,
                                                                  device=probs.device))
    return kept / kept.sum(dim=-1, keepdim=True)
