"""Misconception: reserve() is the main test and max_num_seqs a detail checked after it. But
reserve() holds the head's KV memory: when max_num_seqs requests already run, the head stays
waiting with memory allocated (stage 4: a slot; stage 5: blocks), never freed if aborted."""


def admit(self, budget: int) -> list:
    if not self.admission_open():
        return []
    admitted = []
    while self.waiting:
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0 or len(self.running) >= self.config.max_num_seqs:
            break
        self.running.append(self.waiting.popleft())
        admitted.append((request, n))
        budget -= n
    return admitted
