"""Misconception: "first fit" read as best fit (the smallest hole that fits, to limit fragmentation).
Goes wrong with holes [range(0, 300), range(400, 500)] and a slot of 100 rows: returns 1, not 0.
"""


def first_fit(self, request) -> int | None:
    """The index in ``self.holes`` of the first hole at least
    ``self.slot_size(request)`` rows long, or None if no hole is.
    """
    size = self.slot_size(request)
    best = None
    for i, hole in enumerate(self.holes):
        if len(hole) >= size and (best is None or len(hole) < len(self.holes[best])):
            best = i
    return best
