"""Correct, written differently: the finished case empties the buffer in an early return,
and the streaming case counts how many characters are free to go (never negative) and
splits the buffer at that count, rather than computing a 'keep' and slicing from the end."""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    if final or self.stopped:
        everything, self.pending = self.pending, ""
        return everything
    free = len(self.pending) - self.hold
    if free <= 0:
        return ""
    ready, self.pending = self.pending[:free], self.pending[free:]
    return ready
