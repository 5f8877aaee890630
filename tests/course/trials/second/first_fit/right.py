"""Correct, written differently: asks slot_size once, then scans the holes' lengths with
itertools and next() instead of an explicit loop with an early return.
"""
import itertools


def first_fit(self, request) -> int | None:
    """The index in ``self.holes`` of the first hole at least
    ``self.slot_size(request)`` rows long, or None if no hole is.
    """
    size = self.slot_size(request)
    fits = (len(hole) >= size for hole in self.holes)
    return next(itertools.compress(itertools.count(), fits), None)
