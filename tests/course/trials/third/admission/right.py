"""Right, seat-counted: the free seats (max_num_seqs - running) are counted once up front and a for
loop runs over them (no while condition re-reading len(running)); the budget left is tracked as `left`,
the head is popped only after reserve() granted it tokens, and admission_open() is asked exactly once."""


def admit(self, budget: int) -> list:
    """Move waiting requests into self.running; return the admitted (request, n) pairs."""
    if not self.admission_open():
        return []
    admitted, left = [], budget
    seats = self.config.max_num_seqs - len(self.running)
    for _ in range(max(seats, 0)):
        if not self.waiting:
            break
        granted = self.reserve(self.waiting[0], left)
        if not granted:
            break                       # first come, first served: nobody overtakes the head
        head = self.waiting.popleft()
        self.running.append(head)
        admitted.append((head, granted))
        left -= granted
    return admitted
