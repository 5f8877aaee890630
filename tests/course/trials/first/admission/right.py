"""Correct, written differently: the free seats are counted once up front and spent in a
bounded for-loop (instead of re-testing len(self.running) each time round a while-loop),
and the budget left is tracked by subtracting from a running total after each admission."""


def admit(self, budget: int) -> list:
    """Move waiting requests (``self.waiting``, a deque, oldest first) into
    ``self.running`` for this step, and return the admitted (request, n) pairs,
    n being the tokens each computes this step. The rules:

    - first come, first served: no request is admitted before one that waited
      longer, so a head that does not fit stops admission;
    - at most ``self.config.max_num_seqs`` requests run, and the admitted ones'
      tokens fit in ``budget``; ``self.reserve(request, budget)`` says how many
      tokens a request gets (0: it does not fit) and holds its KV memory;
    - nobody is admitted when ``self.admission_open()`` says no (chapter 6).
    """
    if not self.admission_open():            # once per step, whatever waits
        return []
    seats = self.config.max_num_seqs - len(self.running)
    admitted = []
    for _ in range(max(seats, 0)):
        if not self.waiting:
            break
        n = self.reserve(self.waiting[0], budget)
        if n <= 0:                           # the head does not fit: nobody behind it goes
            break
        request = self.waiting.popleft()
        self.running.append(request)
        admitted.append((request, n))
        budget -= n
    return admitted
