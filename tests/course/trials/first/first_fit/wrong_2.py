"""Misconception: the chapter says every slot is max_model_len rows, so the hole is sized
against self.max_model_len. Right under kv_reservation="max"; with "pow2"/"oracle" a 100-row
slot finds no place in a 150-row hole when max_model_len is 256 (returns None)."""


def first_fit(self, request) -> int | None:
    """The index in ``self.holes`` of the first hole at least
    ``self.slot_size(request)`` rows long, or None if no hole is.
    """
    for i, hole in enumerate(self.holes):
        if len(hole) >= self.max_model_len:
            return i
    return None
