"""Correct. Differs from the obvious descending-sort/scatter version: sorts ascending
(as Hugging Face's TopPLogitsWarper does), gets the mass ranked above each token as a
reversed cumulative sum, and returns to vocabulary order with gather by the inverse
permutation instead of scatter_.
"""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """probs [B, V] (each row sums to 1), top_p [B] in (0, 1]: zero every token
    outside each row's smallest set of most likely tokens whose probability
    reaches top_p, and renormalize each row to sum to 1.
    """
    ascending, order = torch.sort(probs, dim=-1)             # worst first, best last
    # Mass of the tokens ranked above position i (to its right), added best first so
    # that it is the same sum a descending cumulative sum would form.
    above = torch.zeros_like(ascending)
    above[..., :-1] = ascending[..., 1:].flip(-1).cumsum(-1).flip(-1)
    keep_sorted = above < top_p.to(ascending.dtype)[:, None]
    keep_sorted[..., -1] = True                               # the best token always stays
    inverse = torch.argsort(order, dim=-1)
    keep = keep_sorted.gather(-1, inverse)
    kept = torch.where(keep, probs, torch.zeros_like(probs))
    return kept / kept.sum(dim=-1, keepdim=True)
