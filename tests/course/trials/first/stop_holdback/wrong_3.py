"""Misconception: "with no more than hold characters pending there is nothing to send",
checked before looking at final. A stream whose last piece is empty loses its tail:
stops=["STOP"], add("ab"), take(False) -> "", add(""), take(True) -> "" and "ab" is never sent."""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    if len(self.pending) <= self.hold:
        return ""                     # all of it could still be a stop string's start
    if final or self.stopped:
        piece, self.pending = self.pending, ""
        return piece
    cut = len(self.pending) - self.hold
    piece, self.pending = self.pending[:cut], self.pending[cut:]
    return piece
