"""Right, but it keeps the very same deque object: when bucketing it sorts an explicit
(max_tokens, arrival index) key, then clears and refills self.waiting in place, and it cuts the
batch with islice before popping that many from the front."""
from collections import deque
from itertools import islice


def next_batch(self) -> list:
    """The next batch, up to max_batch_size requests from the front of self.waiting."""
    waiting = self.waiting
    if self.config.bucket_by_length:
        ranked = sorted(enumerate(waiting),
                        key=lambda pair: (pair[1].params.max_tokens, pair[0]))
        waiting.clear()
        waiting.extend(request for _, request in ranked)
    batch = list(islice(waiting, self.config.max_batch_size))
    for _ in batch:
        waiting.popleft()
    return batch
