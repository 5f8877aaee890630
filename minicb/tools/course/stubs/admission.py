"""Chapter 4: admission.

Before every step, the scheduler admits waiting requests in arrival order while
three things allow it. Check: ``python -m minicb check admission``.
"""


def admit(self, budget: int) -> list:
    """Move waiting requests (``self.waiting``, a deque, oldest first) into
    ``self.running`` for this step, and return the admitted (request, n) pairs,
    n being the tokens each computes this step. The rules:

    - first come, first served: no request is admitted before one that waited
      longer, so a head that does not fit stops admission;
    - at most ``self.config.max_num_seqs`` requests run, and the admitted ones'
      tokens fit in ``budget``; ``self.reserve(request, budget)`` says how many
      tokens a request gets (0: it does not fit) and holds its KV memory;
    - nobody is admitted when ``self.admission_open()`` says no (chapter 6).
    """
    raise NotImplementedError
