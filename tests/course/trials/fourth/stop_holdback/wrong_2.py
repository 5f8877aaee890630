"""Misconception: hold back only what could really begin a stop string (the longest tail of
pending that is a prefix of one), as vLLM's detokenizer does, not the last self.hold characters.
It never leaks a stop string, but sends early: stops=["END"], add("abcd"), take(False) gives "abcd", not "ab"."""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    if final or self.stopped:
        text, self.pending = self.pending, ""
        return text
    keep = 0
    for stop in self.stops:
        for k in range(min(len(stop) - 1, len(self.pending)), keep, -1):
            if self.pending.endswith(stop[:k]):
                keep = k
                break
    cut = len(self.pending) - keep
    text, self.pending = self.pending[:cut], self.pending[cut:]
    return text
