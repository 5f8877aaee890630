"""Misconception: a hole's length is how far it reaches, ``hole.stop``, as for a hole starting at row
0 (the only hole of an empty cache); a later hole then looks longer than it is.
Goes wrong: holes [range(50, 56)], slot of 8 rows -> 0 (stop 56 >= 8) instead of None."""


def first_fit(self, request) -> int | None:
    """Index in self.holes of the first hole at least slot_size(request) rows long, or None."""
    size = self.slot_size(request)
    for i, hole in enumerate(self.holes):
        if hole.stop >= size:
            return i
    return None
