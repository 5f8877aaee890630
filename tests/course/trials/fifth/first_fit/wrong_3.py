"""Misconception: the search resumes at the hole it found last time (next fit), so it does
not rescan the start of the cache. Holes [range(0, 4), range(8, 16)], slot_size 4, when its
last fit was at index 1, gives 1 instead of 0 (a hole a free opened earlier is skipped)."""


def first_fit(self, request) -> int | None:
    size = self.slot_size(request)
    count = len(self.holes)
    start = getattr(self, "_next_fit", 0) % count if count else 0
    for step in range(count):
        i = (start + step) % count
        if len(self.holes[i]) >= size:
            self._next_fit = i
            return i
    return None
