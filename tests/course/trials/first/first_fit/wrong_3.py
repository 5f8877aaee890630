"""Misconception: a hole's length is stop - start + 1 (ranges taken as inclusive). Never
matters when every hole is a whole number of max_model_len slots; with per-request sizes a
hole range(0, 99) is taken for a 100-row slot, which then gets only 99 rows."""


def first_fit(self, request) -> int | None:
    """The index in ``self.holes`` of the first hole at least
    ``self.slot_size(request)`` rows long, or None if no hole is.
    """
    size = self.slot_size(request)
    for i, hole in enumerate(self.holes):
        if hole.stop - hole.start + 1 >= size:
            return i
    return None
