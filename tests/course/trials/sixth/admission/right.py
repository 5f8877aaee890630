"""Right, but bounded up front: it asks admission_open() exactly once, computes the free
places (max_num_seqs - running) and tries at most that many heads in a for loop, leaving the
head in the queue until reserve has granted it tokens."""


def admit(self, budget: int) -> list:
    """Admit waiting requests, oldest first, into self.running; return (request, n) pairs."""
    if not self.admission_open():
        return []
    admitted = []
    free_places = self.config.max_num_seqs - len(self.running)
    for _ in range(max(free_places, 0)):
        if not self.waiting:
            break
        head = self.waiting[0]
        granted = self.reserve(head, budget)
        if granted <= 0:
            break                          # the head does not fit: nobody overtakes it
        self.waiting.popleft()
        self.running.append(head)
        admitted.append((head, granted))
        budget -= granted
    return admitted
