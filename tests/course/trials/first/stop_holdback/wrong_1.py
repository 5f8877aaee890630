"""Misconception: "everything but the last hold characters" written as pending[:-hold].
With hold == 0 (no stop strings, or only one-character ones) [:-0] is empty, so nothing
streams until the end: stops=[] and pieces "a", "b" send "", "" and then "ab" at final."""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    if final or self.stopped:
        piece, self.pending = self.pending, ""
        return piece
    piece = self.pending[:-self.hold]
    self.pending = self.pending[len(piece):]
    return piece
