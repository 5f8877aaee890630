"""Misconception: max_num_seqs caps how many requests one step admits. It caps how many run:
with max_num_seqs=4 and 3 already running, it admits up to 4 more (7 running)."""


def admit(self, budget: int) -> list:
    if not self.admission_open():
        return []
    admitted = []
    while self.waiting and len(admitted) < self.config.max_num_seqs:
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0:
            break
        self.waiting.popleft()
        self.running.append(request)
        admitted.append((request, n))
        budget -= n
    return admitted
