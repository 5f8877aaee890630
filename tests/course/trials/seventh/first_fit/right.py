"""Right: an explicit index loop that tests whether the slot's last row,
hole.start + size - 1, still lies inside the hole (start + size <= stop) instead of
comparing len(hole) with the size through a generator and next().
"""


def first_fit(self, request) -> int | None:
    size = self.slot_size(request)
    holes = self.holes
    index = 0
    while index < len(holes):
        hole = holes[index]
        if hole.start + size <= hole.stop:
            return index
        index += 1
    return None
