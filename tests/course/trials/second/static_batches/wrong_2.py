"""Misconception: a request's expected output length is what it still has to generate,
max_tokens - len(output_token_ids). Differs for a request requeued after a failed step with
output already: max_tokens 8 with 6 tokens done sorts before a fresh max_tokens 4."""
from collections import deque


def next_batch(self) -> list:
    if self.config.bucket_by_length:
        self.waiting = deque(sorted(
            self.waiting, key=lambda r: r.params.max_tokens - len(r.output_token_ids)))
    batch = []
    while self.waiting and len(batch) < self.config.max_batch_size:
        batch.append(self.waiting.popleft())
    return batch
