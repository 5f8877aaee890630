"""Right: reorders the queue in place (clear + extend, so self.waiting stays the same deque
object) with a stable sort on max_tokens alone, then takes the batch with islice and drops
it with popleft; the obvious version builds a new deque and pops in a comprehension."""
from collections import deque
from itertools import islice


def next_batch(self) -> list:
    if self.config.bucket_by_length:
        ordered = sorted(self.waiting, key=lambda request: request.params.max_tokens)
        self.waiting.clear()
        self.waiting.extend(ordered)
    batch = list(islice(self.waiting, self.config.max_batch_size))
    for _ in batch:
        self.waiting.popleft()
    return batch
