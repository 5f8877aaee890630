"""Misconception: a hole must be strictly longer than the slot (">", "room to spare"), so a
hole of exactly slot_size rows is passed over: holes [range(0, 8), range(20, 40)] and a slot
of 8 give 1 instead of 0 (and None when the only fitting hole is exact)."""


def first_fit(self, request) -> int | None:
    size = self.slot_size(request)
    for index, hole in enumerate(self.holes):
        if len(hole) > size:
            return index
    return None
