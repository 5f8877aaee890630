"""Right: asks slot_size once, marks which holes are long enough in one list, and returns
the position of the first True (list.index) rather than returning from inside a loop; a
hole exactly the slot's size fits."""


def first_fit(self, request) -> int | None:
    size = self.slot_size(request)
    fits = [hole.stop - hole.start >= size for hole in self.holes]
    return fits.index(True) if True in fits else None
