"""Wrong: takes a row of a tensor, probs[i], for a copy (as a list's slice would be)
and builds the residual max(0, p - q) in it in place, so the caller's p at the
rejected position is left as the residual. The tokens returned and the draws made
are the contract's; only the argument it was told to leave alone is changed.

Concrete input: one draft x = 0, q = None (prompt lookup), p = [[1/2, 1/2], [1, 0]],
rejected: the token returned is 1, as it should be, but probs[0] is now [0, 1/2].
"""
import torch

from minicb.stages.speculative import draw


def accept(draft, probs, generator=None) -> list[int]:
    kept = []
    for i, x in enumerate(draft.tokens):
        x = int(x)
        qx = 1.0 if draft.probs is None else draft.probs[i][x]
        u = torch.rand((), generator=generator, device=probs.device)
        if u * qx < probs[i][x]:
            kept.append(x)
            continue
        rest = probs[i]                      # "the row at the rejected draft"
        if draft.probs is None:
            rest[x] = 0                      # p without x
        else:
            rest.sub_(draft.probs[i]).clamp_(min=0)
        if rest.sum() == 0:
            rest = probs[i]
        return kept + [int(draw(rest, generator))]
    return kept + [int(draw(probs[len(draft)], generator))]
