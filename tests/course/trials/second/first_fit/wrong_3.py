"""Misconception: a hole must be longer than the slot ("leave the hole something"), so a hole of exactly
slot_size rows is skipped. Goes wrong with holes [range(0, 2048)] and slot_size 2048: returns None, not 0.
"""


def first_fit(self, request) -> int | None:
    """The index in ``self.holes`` of the first hole at least
    ``self.slot_size(request)`` rows long, or None if no hole is.
    """
    size = self.slot_size(request)
    for i, hole in enumerate(self.holes):
        if hole.stop - hole.start > size:
            return i
    return None
