"""Misconception: ask reserve first whether the head fits, then check max_num_seqs. But reserve
holds the KV memory: with max_num_seqs running and a head that fits, its slot/blocks are taken
though it is not admitted (and leak if it is aborted while waiting)."""


def admit(self, budget: int) -> list:
    """Admit waiting requests, oldest first, into self.running; return (request, n) pairs."""
    admitted = []
    if not self.admission_open():
        return admitted
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
