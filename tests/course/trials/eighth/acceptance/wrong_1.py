"""Wrong: reads "what p has beyond q" as a correction at the rejected token alone:
the replacement is drawn from p with p(x) lowered to max(0, p(x) - q(x)), every
other token left at p. For prompt lookup (q all on x) that is exactly p without x,
the chapter's case, so it is right there; with a draft model it puts back weight on
tokens the drafter already over-proposed.

Concrete input: V = 3, one draft x = 0 with q = [1/2, 1/2, 0], p = [1/4, 1/4, 1/2]:
x is kept with probability 1/2; at a rejection the contract's residual is
[0, 0, 1/2] (always token 2), this one is [0, 1/4, 1/2] (token 1 a third of the time).
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
        rest = probs[i].clone()
        rest[x] = torch.clamp(rest[x] - qx, min=0)
        if rest.sum() == 0:
            rest = probs[i]
        return kept + [int(draw(rest, generator))]
    return kept + [int(draw(probs[len(draft)], generator))]
