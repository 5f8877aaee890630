"""Misconception: fairness says a preempted request goes to the back of the queue,
behind everyone who was already waiting. The contract puts it at the head: it is the
next request admitted (it was already admitted once, and has done work). Input:
running [A, B], waiting [C]; preempt(B) -> waiting must be [B, C]; this gives [C, B].
"""


def preempt(self, request):
    self.running.remove(request)
    self.kv.free(request)
    request.num_computed_tokens = 0
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
    self.waiting.append(request)
