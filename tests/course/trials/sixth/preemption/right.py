"""Right: finds the request's place in the running list by identity and deletes it there
(no equality search), and puts it at the head of the queue by appending and rotating
once, instead of remove() and appendleft().
"""


def preempt(self, request):
    """Preempt ``request`` by recomputation. Afterwards:

    - it no longer runs, and holds no KV memory: ``self.kv.free(request)`` gives
      its blocks back to the free list;
    - none of its tokens counts as computed, though every token it has is kept:
      when it is admitted again, prompt and output are recomputed together;
    - it is the next request to be admitted;
    - the preemption is counted on the request and on the scheduler, and the
      scheduler knows one happened in this step (``self.preempted``).
    """
    index = next(i for i, r in enumerate(self.running) if r is request)
    del self.running[index]
    self.kv.free(request)
    request.num_computed_tokens = 0            # prompt and output are recomputed together
    self.waiting.append(request)
    self.waiting.rotate(1)                     # the last becomes the first: next to admit
    request.num_preemptions += 1
    self.num_preemptions += 1
    self.preempted = True
