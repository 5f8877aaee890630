"""Misconception: "the first hole that fits" should be the tightest one, to keep big holes
for big slots (best fit). Wrong whenever an earlier hole is larger than a later one that
also fits: holes [range(0, 64), range(100, 110)] and a slot of 10 give 1 instead of 0."""


def first_fit(self, request) -> int | None:
    size = self.slot_size(request)
    best = None
    for index, hole in enumerate(self.holes):
        if len(hole) >= size and (best is None or len(hole) < len(self.holes[best])):
            best = index
    return best
