"""Misconception: "first fit" picks the tightest hole that fits (best fit), to waste the least;
identical whenever every hole is a whole number of equal slots, different once sizes vary.
Goes wrong: holes [range(0, 40), range(60, 70)], slot of 8 rows -> 1 instead of 0."""


def first_fit(self, request) -> int | None:
    """Index in self.holes of the first hole at least slot_size(request) rows long, or None."""
    size = self.slot_size(request)
    best = None
    for i, hole in enumerate(self.holes):
        if len(hole) >= size and (best is None or len(hole) < len(self.holes[best])):
            best = i
    return best
