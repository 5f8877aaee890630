"""Right, counted instead of re-tested: the free seats are computed once and the loop runs at
most that many times; the tokens already given out are summed and each reserve gets what is
left of the budget. admission_open() is asked exactly once, first, as the contract's gate."""


def admit(self, budget: int) -> list:
    if not self.admission_open():
        return []
    admitted, used = [], 0
    for _ in range(self.config.max_num_seqs - len(self.running)):
        if not self.waiting:
            break
        n = self.reserve(self.waiting[0], budget - used)
        if n <= 0:
            break                                # the head waits, and so does everyone behind it
        request = self.waiting.popleft()
        self.running.append(request)
        admitted.append((request, n))
        used += n
    return admitted
