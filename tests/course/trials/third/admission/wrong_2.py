"""Misconception: reserve(request, budget) "says how many tokens a request gets", so it is taken to
charge the step's budget itself, and the budget passed on is never reduced.
Goes wrong: budget 10, two waiting prompts of 6 tokens -> both admitted, 12 tokens in a 10-token step."""


def admit(self, budget: int) -> list:
    """Move waiting requests into self.running; return the admitted (request, n) pairs."""
    admitted = []
    if not self.admission_open():
        return admitted
    while self.waiting and len(self.running) < self.config.max_num_seqs:
        n = self.reserve(self.waiting[0], budget)
        if n == 0:
            break
        request = self.waiting.popleft()
        self.running.append(request)
        admitted.append((request, n))
    return admitted
