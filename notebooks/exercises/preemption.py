"""Chapter 6: preemption by recomputation.

When a running request needs a block and none is free, the scheduler preempts the
most recently admitted request. Check: ``python -m minicb check preemption``.
"""


def preempt(self, request):
    """Drop ``request``'s KV memory and send it back to wait:

    - remove it from ``self.running`` and free its blocks (``self.kv.free``);
    - nothing of it is cached now: ``request.num_computed_tokens = 0`` (its
      tokens so far are kept, and are recomputed in one prefill when it is
      admitted again);
    - count it: ``request.num_preemptions`` and ``self.num_preemptions`` each go
      up by one, and ``self.preempted = True`` (no admission this step);
    - put it at the *head* of ``self.waiting``, so it is the next admitted.
    """
    raise NotImplementedError
