"""Misconception: admission_open() is a pure test, so it can sit in the loop condition beside the
others. It counts steps and reads the queue: with schedule_interval 2 (or waiting_served_ratio > 0)
only one request is admitted per opening, and steps with nothing waiting are not counted."""


def admit(self, budget: int) -> list:
    """Admit waiting requests, oldest first, into self.running; return (request, n) pairs."""
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
