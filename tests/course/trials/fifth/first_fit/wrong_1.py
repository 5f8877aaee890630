"""Misconception: slot_size leaves out the last sampled token, so the hole needs one row
more than slot_size. A hole exactly slot_size rows long is refused: holes [range(0, 8)],
slot_size 8 gives None instead of 0 (and with kv_reservation "max" the last slot never fills)."""


def first_fit(self, request) -> int | None:
    needed = self.slot_size(request) + 1
    for i, hole in enumerate(self.holes):
        if len(hole) >= needed:
            return i
    return None
