"""Misconception: admission_open() is a pure test, so it is asked before each request
(in the loop condition). It counts steps: with schedule_interval=3 only one request is
admitted per opening, and with waiting_served_ratio>0 the ratio is re-tested as the queue drains."""


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
    admitted = []
    while (self.waiting and len(self.running) < self.config.max_num_seqs
           and self.admission_open()):
        n = self.reserve(self.waiting[0], budget)
        if n == 0:
            break
        request = self.waiting.popleft()
        self.running.append(request)
        admitted.append((request, n))
        budget -= n
    return admitted
