"""Right: instead of sorted() with a max_tokens key and popleft in a list
comprehension, it ranks the queue by (max_tokens, arrival index) explicitly, refills
the *same* deque object in that order (clear + extend, so self.waiting stays the same
deque), and cuts the batch with itertools.islice before removing it from the front.
"""
from collections import deque
from itertools import islice


def next_batch(self) -> list:
    queue = self.waiting
    if self.config.bucket_by_length:
        ranked = [r for _, _, r in sorted(
            ((r.params.max_tokens, i, r) for i, r in enumerate(queue)),
            key=lambda item: (item[0], item[1]))]
        queue.clear()
        queue.extend(ranked)
    batch = list(islice(queue, self.config.max_batch_size))
    for _ in batch:
        queue.popleft()
    return batch
