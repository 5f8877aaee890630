"""Misconception: max_num_seqs caps how many requests are *admitted per step*, so the
loop counts the ones it admitted. It caps how many *run*: requests already in
self.running take seats. Input: max_num_seqs=2, one request already running, two
waiting that both fit -> only one may be admitted (running becomes 2); this admits both
(3 running).
"""


def admit(self, budget: int) -> list:
    if not self.admission_open():
        return []
    admitted = []
    while self.waiting and len(admitted) < self.config.max_num_seqs:
        request = self.waiting[0]
        n = self.reserve(request, budget)
        if n == 0:
            break
        self.running.append(self.waiting.popleft())
        admitted.append((request, n))
        budget -= n
    return admitted
