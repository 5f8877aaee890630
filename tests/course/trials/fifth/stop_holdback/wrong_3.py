"""Misconception: a whole stop string could still be hiding at the end, so it holds back
the longest stop string's full length (recomputed from self.stops) rather than
self.hold (that length less one). Wrong for stops=["##"], add("abc"): sends "a", not "ab"."""


def take(self, final: bool) -> str:
    """The text that can no longer change, each character once."""
    if final or self.stopped:
        sent, self.pending = self.pending, ""
        return sent
    longest = max((len(stop) for stop in self.stops), default=0)
    cut = max(0, len(self.pending) - longest)
    sent, self.pending = self.pending[:cut], self.pending[cut:]
    return sent
