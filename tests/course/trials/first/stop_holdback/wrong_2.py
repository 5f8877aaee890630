"""Misconception: add() already cut the text at the stop string, so take() only needs
`final` to release the tail. After a stop, take(final=False) still holds hold characters:
stops=["STOP"], add("abcSTOP") then take(False) gives "" instead of "abc"."""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    keep = 0 if final else self.hold
    end = max(0, len(self.pending) - keep)
    piece, self.pending = self.pending[:end], self.pending[end:]
    return piece
