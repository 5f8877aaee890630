"""Misconception: the gate is asked before each admission (it is "may I admit?"). But
admission_open() counts steps and compares waiting with running, which the first admission
changes: schedule_interval=2 or waiting_served_ratio>0 admits one request per step, not all."""


def admit(self, budget: int) -> list:
    admitted = []
    while (self.waiting and len(self.running) < self.config.max_num_seqs
           and self.admission_open()):
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0:
            break
        self.waiting.popleft()
        self.running.append(request)
        admitted.append((request, n))
        budget -= n
    return admitted
