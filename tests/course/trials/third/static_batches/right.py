"""Right, in place: when bucketing, the same deque object is reordered (clear + extend) by a stable
sort on max_tokens alone, rather than rebound to a new deque; the batch is read off the front with
itertools.islice and then popped, instead of popping into a list one by one."""
import itertools
from collections import deque


def next_batch(self) -> list:
    """The next batch of up to max_batch_size requests from the front of self.waiting."""
    queue = self.waiting
    if self.config.bucket_by_length and len(queue) > 1:
        ordered = sorted(queue, key=lambda r: r.params.max_tokens)   # stable: ties keep queue order
        queue.clear()
        queue.extend(ordered)
    batch = list(itertools.islice(queue, self.config.max_batch_size))
    for _ in batch:
        queue.popleft()
    return batch
