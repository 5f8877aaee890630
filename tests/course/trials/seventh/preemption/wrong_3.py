"""Misconception: the victim is always the most recently admitted request, the last
of self.running, so preempting is popping that list. The scheduler does call it with
running[-1], but the contract is to preempt the request given: called on any other
running request, this takes the wrong one out of running while the given request keeps
running, with its memory freed. Input: running [A, B], preempt(A) -> running must be
[B]; this leaves [A].
"""


def preempt(self, request):
    self.running.pop()
    self.kv.free(request)
    request.num_computed_tokens = 0
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
    self.waiting.appendleft(request)
