"""Misconception: sorting is only a way to choose the batch, so the batch is picked from a
sorted copy and removed from the queue, which stays in arrival order. The batch is right,
but self.waiting is not the sorted queue it should be afterwards (e.g. max_tokens 9, 1, 5)."""


def next_batch(self) -> list:
    candidates = list(self.waiting)
    if self.config.bucket_by_length:
        candidates.sort(key=lambda r: r.params.max_tokens)
    batch = candidates[:self.config.max_batch_size]
    for request in batch:
        self.waiting.remove(request)
    return batch
