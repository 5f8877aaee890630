"""Misconception: take the head off the queue, try it, and put it back if it does not fit;
but it goes back with append, at the tail. A head that does not fit (too big for the budget
or the KV memory) then loses its place: waiting [A(big), B] becomes [B, A]."""


def admit(self, budget: int) -> list:
    if not self.admission_open():
        return []
    admitted = []
    while self.waiting and len(self.running) < self.config.max_num_seqs:
        request = self.waiting.popleft()
        n = self.reserve(request, budget)
        if n == 0:
            self.waiting.append(request)         # back in the queue
            break
        self.running.append(request)
        admitted.append((request, n))
        budget -= n
    return admitted
