"""Misconception: "fit" should waste as little as possible, so pick the smallest hole
that is large enough (best fit) instead of the first one in address order. Input:
holes [range(0, 10), range(20, 25)], slot_size 5 -> first fit is index 0; this
returns 1.
"""


def first_fit(self, request) -> int | None:
    size = self.slot_size(request)
    best = None
    for i, hole in enumerate(self.holes):
        if len(hole) >= size and (best is None or len(hole) < len(self.holes[best])):
            best = i
    return best
