"""Misconception: reserve() is only a question, so ask it first and check the seat limit
after. reserve() also allocates: when max_num_seqs is reached the head stays waiting while
holding KV blocks (a slot in stage 4) that nothing frees, e.g. an abort while it waits."""


def admit(self, budget: int) -> list:
    if not self.admission_open():
        return []
    admitted = []
    while self.waiting:
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0 or len(self.running) >= self.config.max_num_seqs:
            break
        self.waiting.popleft()
        self.running.append(request)
        admitted.append((request, n))
        budget -= n
    return admitted
