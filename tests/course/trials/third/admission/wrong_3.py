"""Misconception: max_num_seqs caps how many requests one step *admits*, not how many run, so the
requests already running are not counted. Goes wrong: max_num_seqs 2, two running, one waiting
that fits in memory (paged) -> admitted, three running."""


def admit(self, budget: int) -> list:
    """Move waiting requests into self.running; return the admitted (request, n) pairs."""
    admitted = []
    if not self.admission_open():
        return admitted
    while self.waiting and len(admitted) < self.config.max_num_seqs:
        n = self.reserve(self.waiting[0], budget)
        if n == 0:
            break
        request = self.waiting.popleft()
        self.running.append(request)
        admitted.append((request, n))
        budget -= n
    return admitted
