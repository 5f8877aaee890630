"""Right: turns prompt lookup's missing q into an explicit one-hot tensor up front,
so that one code path serves both drafters (the residual max(0, p - q) then is p
without the draft's token, as the chapter says); tests each draft with the
comparison negated (a rejection is p[i][x] not above u * q[i][x]) and returns from
inside the loop, the bonus draw standing after it; the empty residual is detected
as "no entry above zero" rather than by its sum.
"""
import torch

from minicb.stages.speculative import draw


def accept(draft, probs, generator=None) -> list[int]:
    tokens = [int(t) for t in draft.tokens]
    n = len(tokens)
    if draft.probs is None:
        q = torch.zeros((n, probs.shape[-1]), dtype=probs.dtype, device=probs.device)
        for row, token in enumerate(tokens):
            q[row, token] = 1
    else:
        q = draft.probs
    for i, x in enumerate(tokens):
        u = torch.rand((), generator=generator, device=probs.device)
        if not bool(u * q[i, x] < probs[i, x]):
            leftover = torch.clamp(probs[i] - q[i], min=0)
            if not bool((leftover > 0).any()):
                leftover = probs[i]
            return tokens[:i] + [int(draw(leftover, generator))]
    return tokens + [int(draw(probs[n], generator))]
