"""Misconception: "expected length" is the whole sequence a request will reach, prompt
plus answer, so the queue is sorted by len(prompt) + max_tokens. Wrong when prompts differ:
max_tokens [10, 20] with prompts of 30 and 5 tokens puts the second first."""
from collections import deque


def next_batch(self) -> list:
    if self.config.bucket_by_length:
        self.waiting = deque(sorted(
            self.waiting,
            key=lambda r: len(r.prompt_token_ids) + r.params.max_tokens))
    size = min(self.config.max_batch_size, len(self.waiting))
    return [self.waiting.popleft() for _ in range(size)]
