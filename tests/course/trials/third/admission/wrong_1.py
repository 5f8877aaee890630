"""Misconception: ask reserve() first ("does the head fit?") and only then check the free seats;
when every seat is taken, the head's KV memory is already reserved while it keeps waiting.
Goes wrong: max_num_seqs running, one waiting -> it holds a slot/blocks from the waiting queue (leaked if aborted there)."""


def admit(self, budget: int) -> list:
    """Move waiting requests into self.running; return the admitted (request, n) pairs."""
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
