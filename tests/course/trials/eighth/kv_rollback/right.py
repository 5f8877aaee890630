"""Right: first works out, request by request in the step's order, how many of the
computed tokens are rejected drafts (the draft's length plus one, the step's last
token, less the length of the list it got back), skipping a request not in drafts or
whose entry is an exception (tested as "not a list"); then applies each: lowers the
count by that many and trims. A request whose draft was cut to nothing is still
trimmed, to the count it already has.
"""


def roll_back(self, requests, tokens, drafts):
    plan = []
    for request, outcome in zip(requests, tokens):
        if request not in drafts or not isinstance(outcome, list):
            continue
        computed_this_step = len(drafts[request]) + 1     # the last token, then the drafts
        kept_with_own = len(outcome)                      # kept drafts, then the model's own
        plan.append((request, computed_this_step - kept_with_own))
    for request, rejected in plan:
        request.num_computed_tokens = request.num_computed_tokens - rejected
        self.kv.trim(request, request.num_computed_tokens)
