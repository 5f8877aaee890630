"""Chapter 12: the acceptance rule of speculative decoding.

A verify step gives the model's distribution p at each of a request's drafts
and at the position after the last. Keeping each draft with probability
min(1, p(x) / q(x)), and drawing the token at the first rejection from what is
left of p, makes the tokens kept distributed exactly as the model's own.
Check: ``python -m minicb check acceptance``.
"""
import torch

from minicb.stages.speculative import draw


def accept(draft, probs, generator=None) -> list[int]:
    """The tokens a sampled request keeps from one verify step: a list of ints,
    its kept drafts and then one token more (1 to len(draft) + 1 of them).

    ``draft.tokens``: the drafted token ids; ``draft.probs``: q, [len(draft), V],
    the distribution each was drawn from (q[i][x] > 0 at draft i's token x), or
    None for prompt lookup's drafts, whose q is all on the token (1 there, 0
    elsewhere). ``probs``: p, [len(draft) + 1, V], row i the model's distribution
    for the token at draft i's position (from the tokens before it), and a last
    row for the position past the last draft, after temperature, top_k and top_p (zeros
    where they cut). Each row of p and q sums to 1, up to rounding.

    A seeded request's tokens depend on the random draws, so the draws are part
    of the contract: make these, in this order, with ``generator``, and no others.

    - For each draft in turn (i from 0, token x): one
      ``u = torch.rand((), generator=generator, device=probs.device)``; x is kept
      if ``u * q[i][x] < p[i][x]``, and the next draft is examined.
    - At the first draft not kept: one draw, ``draw(rest, generator)``, where rest
      is max(0, p[i] - q[i]) elementwise, or p[i] itself if rest is all zero
      (only rounding leaves nothing); return the drafts kept and that token.
    - With every draft kept: one draw, ``draw(probs[len(draft)], generator)``, after
      them.

    ``draw(weights, generator)`` (imported above) is torch.multinomial's pick of
    one token from weights normalised to sum to 1, as an int. Leave draft and
    probs as they are.
    """
    raise NotImplementedError
