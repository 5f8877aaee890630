"""Misconception: max_num_seqs limits how many requests one step admits, so count this
step's admissions against it instead of everything running. With requests already running,
too many run: 16 running, max_num_seqs 16, still admits up to 16 more."""


def admit(self, budget: int) -> list:
    admitted = []
    if not self.admission_open():
        return admitted
    while self.waiting and len(admitted) < self.config.max_num_seqs:
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0:
            break
        self.running.append(self.waiting.popleft())
        admitted.append((request, n))
        budget -= n
    return admitted
