"""Right: asks admission_open() once, then computes the free seats up front
(max_num_seqs - running) and runs a counted for-loop over them, stopping at an empty
queue or at a head that reserve() refuses; the budget passed on is the original budget
less the tokens admitted so far, recomputed from the admitted list instead of being
decremented in place.
"""


def admit(self, budget: int) -> list:
    if not self.admission_open():
        return []
    admitted = []
    free_seats = self.config.max_num_seqs - len(self.running)
    for _ in range(max(free_seats, 0)):
        if not self.waiting:
            break
        head = self.waiting[0]
        tokens = self.reserve(head, budget - sum(n for _, n in admitted))
        if tokens == 0:
            break
        self.waiting.popleft()
        self.running.append(head)
        admitted.append((head, tokens))
    return admitted
