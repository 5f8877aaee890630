"""Misconception: a head that does not fit should let smaller requests behind it use the
room (fill the step), so it `continue`s past it. Breaks FCFS: with 100 tokens of budget left
after the decodes, a 200-token head is skipped and the 10-token request behind it admitted."""


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
    for request in list(self.waiting):
        if len(self.running) >= self.config.max_num_seqs:
            break
        n = self.reserve(request, budget)
        if n == 0:
            continue          # too big for what is left: try the next one
        self.waiting.remove(request)
        self.running.append(request)
        admitted.append((request, n))
        budget -= n
    return admitted
