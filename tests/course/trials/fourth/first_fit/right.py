"""Right, but vectorised over the holes with itertools.compress (the indices whose length
is enough) and next() for the first, instead of a for loop with an early return; slot_size
is asked once."""
from itertools import compress, count


def first_fit(self, request) -> int | None:
    need = self.slot_size(request)
    fits = (len(hole) >= need for hole in self.holes)
    return next(compress(count(), fits), None)
