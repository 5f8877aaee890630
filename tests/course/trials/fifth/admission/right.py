"""Right: asks admission_open() once, then counts the free seats up front and walks at most
that many heads of the queue with a bounded for-loop (rather than re-testing len(running)
in a while); stops at the first head that reserve() cannot place."""


def admit(self, budget: int) -> list:
    if not self.admission_open():
        return []
    admitted = []
    seats = self.config.max_num_seqs - len(self.running)
    for _ in range(max(seats, 0)):
        if not self.waiting:
            break
        head = self.waiting[0]
        n = self.reserve(head, budget)
        if n == 0:
            break                      # first come, first served: nobody overtakes it
        self.waiting.popleft()
        self.running.append(head)
        admitted.append((head, n))
        budget -= n
    return admitted
