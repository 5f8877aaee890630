"""Chapter 1: nucleus (top-p) sampling.

The sampler turns each row's logits into probabilities, then keeps, for each row,
only the most likely tokens whose probabilities together reach that row's
``top_p``. Check: ``python -m minicb check top_p``.
"""
import torch


def keep_top_p(probs: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """probs [B, V] (each row sums to 1), top_p [B] in (0, 1]: zero every token
    outside each row's smallest set of most likely tokens whose probability
    reaches top_p, and renormalize each row to sum to 1. Return a new tensor of
    probs' shape, dtype and device; probs and top_p stay as they were. Where tokens tie at the set's edge, which of
    them stay is yours to choose: the set's size is what the contract fixes.

    Hints: sort each row in descending order; a token is dropped when the
    probability of the tokens sorted before it already reaches top_p; the best
    token always stays (top_p may round to 0); ``scatter_`` puts values back in
    vocabulary order.
    """
    raise NotImplementedError
