"""Wrong: believes trim to a request's own count is a harmless no-op, so calls it for
every request the step ran, with or without a draft (and even when the step failed
it): the drafters' counts are rolled back as they should be, the others' left as
they are, but trim is called for requests the contract says to leave alone.

Concrete input: a step of two requests, A with a draft of 2 (kept 1) and B decoding
with no draft: the contract lowers A's count by 1 and trims A once; this also calls
kv.trim(B, B.num_computed_tokens).
"""


def roll_back(self, requests, tokens, drafts):
    for request, result in zip(requests, tokens):
        draft = drafts.get(request)
        if draft is not None and isinstance(result, list):
            request.num_computed_tokens -= len(draft) - (len(result) - 1)
        self.kv.trim(request, request.num_computed_tokens)
