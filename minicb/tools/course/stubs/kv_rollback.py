"""Chapter 12: giving back the rejected drafts' KV.

A verify step feeds a request's last token and its drafts through the model at
once, so their K/V is written to the cache and counted among the request's
computed tokens. The drafts the model rejects are not the request's tokens: its
cache must end before them, and the blocks that hold nothing else go back to
the free list. Check: ``python -m minicb check kv_rollback``.
"""


def roll_back(self, requests, tokens, drafts):
    """After a verify step, for each of ``requests`` in turn, with its entry of
    ``tokens``: what the step gave it, either a list (the drafts it kept, then one
    token of the model's own) or an exception (the step failed it). ``drafts``
    maps a request to its Draft (``len(draft)`` tokens; maybe none, where the
    token budget cut them all); a request that drafted nothing is not in it.

    A request with a draft and a list of tokens counts its last token and every
    draft in ``request.num_computed_tokens``: make it count the drafts it kept
    and none of those rejected (the model's own token, the list's last, is not
    computed yet: the next step feeds it). Then
    ``self.kv.trim(request, request.num_computed_tokens)`` gives back the blocks
    past that many tokens, to the free list. A draft may be shorter than the k
    the engine asks for, or empty: count its own length. Leave every other
    request, and the arguments, as they are. Of ``self``, use ``self.kv`` alone.
    """
    raise NotImplementedError
