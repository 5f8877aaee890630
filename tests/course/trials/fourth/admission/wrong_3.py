"""Misconception: admission_open() is a pure question, so ask it before each admission.
It counts steps (schedule_interval) and compares waiting with running, so asking it per
request stops after one admission when schedule_interval > 1 or waiting_served_ratio > 0."""


def admit(self, budget: int) -> list:
    admitted = []
    while (self.waiting and len(self.running) < self.config.max_num_seqs
           and self.admission_open()):
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0:
            break
        self.running.append(self.waiting.popleft())
        admitted.append((request, n))
        budget -= n
    return admitted
