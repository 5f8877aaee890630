"""Wrong: treats a rejection as a repair rather than an end: the rejected draft is
replaced by a token drawn from max(0, p - q) and the drafts after it are still
examined, the bonus token drawn at the end as if all were kept. But the rows of p
after a rejected draft were computed with that draft in the context, not with its
replacement, so they say nothing about what follows the replacement; and every step
now returns len(draft) + 1 tokens.

Concrete input: drafts [a, b], p[0](a) = 0 so a is rejected: the contract returns one
token (the replacement), after two draws; this returns three: the replacement, then b
or a token in its place (judged against p[1], which assumed a), then a bonus token,
after four or five draws.
"""
import torch

from minicb.stages.speculative import draw


def accept(draft, probs, generator=None) -> list[int]:
    out = []
    for i, x in enumerate(draft.tokens):
        x = int(x)
        if draft.probs is None:
            q = torch.zeros_like(probs[i])
            q[x] = 1
        else:
            q = draft.probs[i]
        u = torch.rand((), generator=generator, device=probs.device)
        if u * q[x] < probs[i][x]:
            out.append(x)
        else:
            rest = torch.clamp(probs[i] - q, min=0)
            if rest.sum() == 0:
                rest = probs[i]
            out.append(int(draw(rest, generator)))
    out.append(int(draw(probs[len(draft)], generator)))
    return out
