"""Misconception: a hole's rows run from start to stop inclusive, so its length is
stop - start + 1 (the fence-post count for closed intervals). Python ranges exclude
stop: this counts every hole one row too long and accepts a hole one row too small,
whose slot would then be a row short. With the default kv_reservation every hole is a
whole number of slots and it never shows; with "oracle" or "pow2" it does. Input:
holes [range(0, 4), range(10, 20)], slot_size 5 -> index 1 required; this returns 0.
"""


def first_fit(self, request) -> int | None:
    size = self.slot_size(request)
    for i, hole in enumerate(self.holes):
        if hole.stop - hole.start + 1 >= size:
            return i
    return None
