"""Misconception: "the hole a slot fits in" should be the tightest one (best fit), to keep big
holes for big requests. Same tokens, different placement: holes [0:300], [500:600] and a
100-row slot gives index 1, not 0."""


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
