"""Misconception: reserve() is a question ("how many tokens would it get?"), so the
student asks it first and only then checks for a free seat. reserve() also allocates the
request's KV memory: when the seats are all taken, the head is left waiting while
holding memory it was given (never freed if it is aborted, and counted twice when it is
reserved again). Input: max_num_seqs=1, one request running, one waiting that fits ->
nothing is admitted, as required, but the waiting request now holds KV blocks/a slot.
"""


def admit(self, budget: int) -> list:
    if not self.admission_open():
        return []
    admitted = []
    while self.waiting:
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0 or len(self.running) >= self.config.max_num_seqs:
            break
        self.running.append(self.waiting.popleft())
        admitted.append((request, n))
        budget -= n
    return admitted
