"""Chapter 4: stage 4's slots, first fit.

Stage 4's cache is one run of token rows. Each request takes a contiguous slot;
``self.holes`` lists the free runs (Python ranges of row numbers) in address order.
Check: ``python -m minicb check first_fit`` (slots sized per request, so holes of many
sizes appear).
"""


def first_fit(self, request) -> int | None:
    """The index in ``self.holes`` of the first hole at least
    ``self.slot_size(request)`` rows long, or None if no hole is.
    """
    raise NotImplementedError
