"""Misconception: "first fit" means the fit that wastes least (best fit), the smallest hole
that is long enough. holes [range(0, 10), range(20, 24)], slot_size 4 gives 1 instead of 0."""


def first_fit(self, request) -> int | None:
    size = self.slot_size(request)
    best = None
    for i, hole in enumerate(self.holes):
        if len(hole) >= size and (best is None or len(hole) < len(self.holes[best])):
            best = i
    return best
