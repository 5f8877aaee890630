"""Misconception: admission_open() is a pure yes/no question, so there is no point
asking it when nobody waits; return early on an empty queue. It is not pure: it counts
steps for schedule_interval, so skipping it on steps with an empty queue makes the
scheduler lose count, and admission then comes on other steps than it should. Input:
schedule_interval=3, requests running, queue empty for 5 steps, one request arrives
before step 6 -> the engine's count reaches 3 again at step 6 and admits it then; this
has counted nothing during the empty steps and admits it only at step 8.
"""


def admit(self, budget: int) -> list:
    if not self.waiting:
        return []
    if not self.admission_open():
        return []
    admitted = []
    while self.waiting and len(self.running) < self.config.max_num_seqs:
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0:
            break
        self.running.append(self.waiting.popleft())
        admitted.append((request, n))
        budget -= n
    return admitted
