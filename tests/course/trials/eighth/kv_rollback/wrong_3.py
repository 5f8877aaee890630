"""Wrong: counts the kept drafts as the longest prefix of the list that agrees with
the draft, token by token, rather than as the list's length less one. The two agree
whenever the model's own token differs from the draft it replaced, which is how it
usually comes out; but the model's own token may equal the draft at its position (a
draw from p where the residual is empty, or any list the contract allows), and then
that rejected draft is counted as kept.

Concrete input: draft [5, 6], tokens [5, 6] (the first draft kept, then the model's
own token, 6): the count must drop by 1 (the second draft); this counts both drafts
as kept and lowers it by 0.
"""


def roll_back(self, requests, tokens, drafts):
    for request, result in zip(requests, tokens):
        if request not in drafts or isinstance(result, Exception):
            continue
        draft = list(drafts[request].tokens)
        kept = 0
        while kept < len(draft) and kept < len(result) and result[kept] == draft[kept]:
            kept += 1
        request.num_computed_tokens -= len(draft) - kept
        self.kv.trim(request, request.num_computed_tokens)
