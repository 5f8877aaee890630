"""Misconception: victims of one step go back to the head in the order they were preempted
(first preempted, first readmitted). Wrong when one step preempts twice: newest N then older O leave [N, O, ...], not [O, N, ...].
"""


def preempt(self, request):
    """Preempt ``request`` by recomputation."""
    self.running.remove(request)
    self.kv.free(request)
    request.num_computed_tokens = 0
    # The first victim of a step goes to the head, later ones right behind it,
    # so the victims keep the order in which they were preempted.
    if not self.preempted:
        self._victims_this_step = 0
    self.waiting.insert(self._victims_this_step, request)
    self._victims_this_step += 1
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
