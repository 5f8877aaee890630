"""Misconception: without chunked prefill nothing is ever split, and no request can be
larger than a step anyway, because add_request refuses prompts longer than
max_num_batched_tokens. But a preempted request recomputes its prompt *and* its output,
which can outgrow any step: all-or-none then never runs it. Input: chunking off,
max_num_batched_tokens 16, remaining 20, budget 16 -> 16 required; this returns 0
for ever.
"""


def fit(self, remaining: int, budget: int) -> int:
    if self.config.enable_chunked_prefill:
        return min(remaining, budget)
    return remaining if remaining <= budget else 0
