"""Misconception: the expected output length is what a request still has to generate,
max_tokens - len(output_token_ids). Wrong for requests requeued after a failed step (they
keep their output): A(max 10, 8 done) now sorts before B(max 5, none done)."""
from collections import deque


def next_batch(self) -> list:
    if self.config.bucket_by_length:
        self.waiting = deque(sorted(
            self.waiting,
            key=lambda r: r.params.max_tokens - len(r.output_token_ids)))
    n = min(self.config.max_batch_size, len(self.waiting))
    return [self.waiting.popleft() for _ in range(n)]
