"""Right, with an explicit index walk over the holes measuring each as stop - start (no
enumerate, no len of a range), the slot's size asked for once."""


def first_fit(self, request) -> int | None:
    """The index in self.holes of the first hole at least slot_size(request) rows long, or None."""
    need = self.slot_size(request)
    holes = self.holes
    i = 0
    while i < len(holes):
        if holes[i].stop - holes[i].start >= need:
            return i
        i += 1
    return None
