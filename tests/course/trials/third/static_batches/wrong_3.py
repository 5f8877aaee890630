"""Misconception: "expected output length" is what is left to generate, max_tokens minus the
output already held, so a request put back after a failed step sorts by its remaining tokens.
Goes wrong: bucket_by_length, a requeued request with max_tokens 20 and 18 outputs waits behind a fresh max_tokens 5 -> it is cut first."""
from collections import deque


def next_batch(self) -> list:
    """The next batch of up to max_batch_size requests from the front of self.waiting."""
    if self.config.bucket_by_length:
        remaining = lambda r: r.params.max_tokens - len(r.output_token_ids)
        self.waiting = deque(sorted(self.waiting, key=remaining))
    size = min(self.config.max_batch_size, len(self.waiting))
    return [self.waiting.popleft() for _ in range(size)]
