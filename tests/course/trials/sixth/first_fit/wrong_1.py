"""Misconception: a slot must leave room in its hole, so the hole has to be longer than the slot
(>). Goes wrong when a hole is exactly the slot's size: holes [range(0, 8), range(20, 40)], slot
of 8 rows gives 1 instead of 0 (and None when the exact hole is the only one)."""


def first_fit(self, request) -> int | None:
    """The index in self.holes of the first hole at least slot_size(request) rows long, or None."""
    size = self.slot_size(request)
    for i, hole in enumerate(self.holes):
        if len(hole) > size:
            return i
    return None
