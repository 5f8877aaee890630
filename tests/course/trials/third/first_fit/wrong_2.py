"""Misconception: holes are kept in address order and freed rows merge back, so only the first hole
(the lowest free rows) needs looking at: it fits or nothing does. True when every slot is
max_model_len rows; with per-request sizes: holes [range(0, 4), range(20, 60)], slot 8 -> None instead of 1."""


def first_fit(self, request) -> int | None:
    """Index in self.holes of the first hole at least slot_size(request) rows long, or None."""
    if self.holes and len(self.holes[0]) >= self.slot_size(request):
        return 0
    return None
