"""Correct, written differently: walks the holes from the last to the first and keeps the
lowest index that fits (no early exit), testing fit as hole.start + size <= hole.stop
instead of len(hole) >= size; the slot size is computed once."""


def first_fit(self, request) -> int | None:
    """The index in ``self.holes`` of the first hole at least
    ``self.slot_size(request)`` rows long, or None if no hole is.
    """
    size = self.slot_size(request)
    found = None
    for i in range(len(self.holes) - 1, -1, -1):
        hole = self.holes[i]
        if hole.start + size <= hole.stop:
            found = i
    return found
