"""Right, written differently: the running list is searched by identity (``is``) and the entry
deleted by position, the victim is pushed onto the back of the queue and the queue rotated one
place so that it comes first, and the counters go up through one loop over both owners."""


def preempt(self, request):
    """Preempt ``request`` by recomputation. Afterwards:

    - it no longer runs, and holds no KV memory (its blocks are free again);
    - none of its tokens counts as computed, though every token it has is kept:
      when it is admitted again, prompt and output are recomputed together;
    - it is the next request to be admitted;
    - the preemption is counted on the request and on the scheduler, and the
      scheduler knows one happened in this step (``self.preempted``).
    """
    position = next(i for i, r in enumerate(self.running) if r is request)
    del self.running[position]
    self.kv.free(request)                 # its blocks go back to the pool
    request.num_computed_tokens = 0       # all_token_ids is untouched: prompt + output
    self.waiting.append(request)
    self.waiting.rotate(1)                # the back of the queue becomes its head
    for owner in (request, self):
        owner.num_preemptions = owner.num_preemptions + 1
    self.preempted = True
