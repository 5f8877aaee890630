"""Misconception: ask reserve() first (does the head fit?) and check the free places after.
When max_num_seqs is already reached, the head's KV memory has been reserved but it is not
admitted: memory leaks (e.g. 1 seat, 2 waiting: the second's blocks/slot stay held)."""


def admit(self, budget: int) -> list:
    admitted = []
    if not self.admission_open():
        return admitted
    while self.waiting:
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0 or len(self.running) >= self.config.max_num_seqs:
            break
        self.running.append(self.waiting.popleft())
        admitted.append((request, n))
        budget -= n
    return admitted
