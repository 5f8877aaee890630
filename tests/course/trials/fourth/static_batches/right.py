"""Right, but the queue is reordered in place (same deque object: cleared and refilled),
with arrival order as an explicit tie-break (index in the queue) rather than relying on
sort stability; the batch is then cut with popleft."""
from collections import deque


def next_batch(self) -> list:
    queue = self.waiting
    if self.config.bucket_by_length and len(queue) > 1:
        ranked = sorted(enumerate(queue), key=lambda e: (e[1].params.max_tokens, e[0]))
        queue.clear()
        queue.extend(request for _, request in ranked)
    take = min(self.config.max_batch_size, len(queue))
    return [queue.popleft() for _ in range(take)]
