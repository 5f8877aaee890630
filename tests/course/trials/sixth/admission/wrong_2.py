"""Misconception: pop the head to try it, and put it back with append() if it does not fit. The
head goes to the *back* of the queue: waiting [A (too big), B, C] becomes [B, C, A], and B is
admitted before A next step (first come, first served broken)."""


def admit(self, budget: int) -> list:
    """Admit waiting requests, oldest first, into self.running; return (request, n) pairs."""
    admitted = []
    if not self.admission_open():
        return admitted
    while self.waiting and len(self.running) < self.config.max_num_seqs:
        request = self.waiting.popleft()
        n = self.reserve(request, budget)
        if n == 0:
            self.waiting.append(request)
            break
        self.running.append(request)
        admitted.append((request, n))
        budget -= n
    return admitted
