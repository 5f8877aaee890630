"""Misconception: TPOT is the time a request spends being served per token after the
first, measured from when it was first scheduled (so that queueing is left out), not
from its first token. That folds the prefill (the time to the first token after
scheduling) into every later token. Input: first_scheduled_time 0.9,
first_token_time 1.0, finish_time 1.3, num_output_tokens 4 -> 0.1 s required; this
returns 0.4 / 3 = 0.133 s.
"""


def tpot(self) -> float:
    if self.first_token_time is None or self.num_output_tokens < 2:
        return 0.0
    start = self.first_scheduled_time
    if start is None:
        start = self.first_token_time
    return (self.finish_time - start) / (self.num_output_tokens - 1)
