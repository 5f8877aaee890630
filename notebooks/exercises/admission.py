"""Chapter 4: admission.

Before every step, the scheduler admits waiting requests in arrival order while
three things allow it. Check: ``python -m minicb check admission``.
"""


def admit(self, budget: int) -> list:
    """Admit from the head of ``self.waiting`` (a deque) while fewer than
    ``self.config.max_num_seqs`` requests are in ``self.running``, and while the
    head fits: ``n = self.reserve(request, budget)`` gives how many of its tokens
    run this step, with KV memory allocated for them, or 0 if they do not fit.

    Never skip the head: stop at the first request that does not fit. Move each
    admitted request to the end of ``self.running`` and spend its n tokens from
    ``budget``. Return the admitted (request, n) pairs.

    The engine first asks ``self.admission_open()`` and admits nobody when it says
    no (chapter 6's knobs); do the same.
    """
    raise NotImplementedError
