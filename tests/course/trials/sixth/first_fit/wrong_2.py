"""Misconception: every slot is max_model_len rows (the chapter's default), so that is the size
to look for. Right under kv_reservation="max"; with "pow2" or "oracle" a request needing 5 rows
is refused a 5-row hole (holes [range(0, 5)], max_model_len 64 gives None instead of 0)."""


def first_fit(self, request) -> int | None:
    """The index in self.holes of the first hole at least slot_size(request) rows long, or None."""
    for i, hole in enumerate(self.holes):
        if len(hole) >= self.max_model_len:
            return i
    return None
