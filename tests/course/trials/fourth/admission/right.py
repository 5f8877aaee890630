"""Right, but the free places are counted once up front and spent in a bounded for loop
(with an early break when the head does not fit), instead of re-checking len(running)
in a while condition."""


def admit(self, budget: int) -> list:
    if not self.admission_open():
        return []
    seats = self.config.max_num_seqs - len(self.running)
    admitted = []
    for _ in range(max(seats, 0)):
        if not self.waiting:
            break
        head = self.waiting[0]
        tokens = self.reserve(head, budget)
        if not tokens:
            break                         # first come, first served: nobody overtakes it
        self.waiting.popleft()
        self.running.append(head)
        admitted.append((head, tokens))
        budget -= tokens
    return admitted
