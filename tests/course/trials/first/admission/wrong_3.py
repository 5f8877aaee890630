"""Misconception: reserve() first, then check for a free seat; when all seats are taken the
head stays waiting but keeps the KV memory reserve() allocated. Leaks if it is aborted while
waiting (finish() frees only running requests), and starves running ones under memory pressure."""


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
    if not self.admission_open():
        return []
    admitted = []
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
