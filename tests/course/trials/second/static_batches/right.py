"""Right, reordering the deque in place: arrival indices break ties explicitly in the sort
key, the same deque object is cleared and refilled, and the batch is sliced off with islice
before being popped."""
from itertools import islice


def next_batch(self) -> list:
    queue = self.waiting
    if self.config.bucket_by_length:
        ranked = sorted(enumerate(queue), key=lambda item: (item[1].params.max_tokens, item[0]))
        queue.clear()
        queue.extend(request for _, request in ranked)
    batch = list(islice(queue, self.config.max_batch_size))
    for _ in batch:
        queue.popleft()
    return batch
