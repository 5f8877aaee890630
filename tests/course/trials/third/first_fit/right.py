"""Right, as one lazy search: next() over a generator of the indices whose hole is long enough,
with None as the default; slot_size is asked once, and hole length is read as stop - start."""


def first_fit(self, request) -> int | None:
    """Index in self.holes of the first hole at least slot_size(request) rows long, or None."""
    need = self.slot_size(request)
    return next((i for i, hole in enumerate(self.holes) if hole.stop - hole.start >= need), None)
