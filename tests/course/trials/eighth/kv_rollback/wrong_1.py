"""Wrong: takes "the request's last token and its k drafts" literally: every request
with a draft is counted as having computed k of them, k being the engine's
num_speculative_tokens, so the rejected drafts are k - (kept). But a request's draft
is often shorter: prompt lookup finds fewer, max_tokens leaves less room, or the
token budget cuts it; then the count drops below the tokens it really has computed.

Concrete input: k = 4, a request drafted 2 tokens (room left for 2) and kept both:
its count must stay; this lowers it by 2, and trims the blocks of tokens it holds.
"""


def roll_back(self, requests, tokens, drafts):
    k = self.config.speculative_config["num_speculative_tokens"]
    for request, result in zip(requests, tokens):
        if request not in drafts or isinstance(result, Exception):
            continue
        kept = len(result) - 1
        request.num_computed_tokens -= k - kept
        self.kv.trim(request, request.num_computed_tokens)
