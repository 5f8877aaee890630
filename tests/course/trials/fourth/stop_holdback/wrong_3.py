"""Misconception: a stop string always ends the stream, so "final" covers it and self.stopped
can be ignored (the server does pass final=True then). Called with final=False after a stop was
found, it still holds back: stops=["xyz"], add("abxyzq"), take(False) gives "" instead of "ab"."""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    if final:
        text, self.pending = self.pending, ""
        return text
    cut = max(len(self.pending) - self.hold, 0)
    text, self.pending = self.pending[:cut], self.pending[cut:]
    return text
