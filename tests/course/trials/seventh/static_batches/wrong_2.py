"""Misconception: a request's "expected length" is its whole sequence, prompt plus
max_tokens, so the queue is sorted by that (as length bucketing often does for
prompts). The contract sorts by expected *output* length, max_tokens alone: requests
that finish together share a batch. Input: bucket_by_length on, max_batch_size=1,
waiting A (prompt 10 tokens, max_tokens 5) then B (prompt 1 token, max_tokens 6) ->
the batch must be [A]; this returns [B].
"""
from collections import deque


def next_batch(self) -> list:
    if self.config.bucket_by_length:
        self.waiting = deque(sorted(
            self.waiting,
            key=lambda r: len(r.prompt_token_ids) + r.params.max_tokens))
    size = min(len(self.waiting), self.config.max_batch_size)
    return [self.waiting.popleft() for _ in range(size)]
