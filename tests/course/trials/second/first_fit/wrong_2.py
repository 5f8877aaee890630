"""Misconception: sizes the slot from what the request writes (prompt + max_tokens - 1), not self.slot_size,
ignoring the reservation policy. Wrong with reservation "max", max_model_len 1024, holes
[range(0, 50), range(100, 1200)], prompt 10, max_tokens 5: returns 0 (a 50-row hole), not 1.
"""


def first_fit(self, request) -> int | None:
    """The index in ``self.holes`` of the first hole at least
    ``self.slot_size(request)`` rows long, or None if no hole is.
    """
    # The rows the request will actually write: its prompt and every output but the last.
    needed = len(request.prompt_token_ids) + request.params.max_tokens - 1
    for i, hole in enumerate(self.holes):
        if len(hole) >= needed:
            return i
    return None
