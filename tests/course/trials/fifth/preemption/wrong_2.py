"""Misconception: first come, first served: the victim goes back in arrival order (before the
first waiting request that arrived after it), not at the head. Wrong when one waiting arrived
at the same time or earlier, e.g. a bench workload all arriving at once: it lands behind them."""


def preempt(self, request):
    """Preempt ``request`` by recomputation (see the stub's contract)."""
    self.running.remove(request)
    self.kv.free(request)
    request.num_computed_tokens = 0
    arrived = request.metrics.arrival_time
    place = len(self.waiting)
    for i, other in enumerate(self.waiting):
        if other.metrics.arrival_time > arrived:   # keep arrival order
            place = i
            break
    self.waiting.insert(place, request)
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
