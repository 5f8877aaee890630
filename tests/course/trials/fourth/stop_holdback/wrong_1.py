"""Misconception: pending[:-hold] is "all but the last hold characters". With hold == 0 (no
stop strings, or only one-character ones) it is "" and pending[-0:] is everything, so nothing
streams until the end: stops=[] , add("Hello"), take(False) gives "" instead of "Hello"."""


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
    text = self.pending[:-self.hold]
    self.pending = self.pending[-self.hold:]
    return text
