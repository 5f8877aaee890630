"""Misconception: every slot is max_model_len rows (what chapter 4 says of the
default), so a hole fits a request when it holds max_model_len rows, whatever the
request. Slots are sized per request by self.slot_size (kv_reservation "pow2" or
"oracle" make them smaller). Input: max_model_len 16, holes [range(0, 10)], a request
whose slot_size is 8 -> index 0 required; this returns None.
"""


def first_fit(self, request) -> int | None:
    for i, hole in enumerate(self.holes):
        if len(hole) >= self.max_model_len:
            return i
    return None
