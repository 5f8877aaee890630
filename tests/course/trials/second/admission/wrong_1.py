"""Misconception: "admits while three things allow it" read literally: admission_open() is
asked before every request, as a loop condition. Same as asking once under the default knobs;
with schedule_interval=2 or waiting_served_ratio>0 it admits one request, not all that fit."""


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
