"""Misconception: once stopped or final the stream is over, so pending need not be
emptied: everything is returned but also kept. A second take (or one after another add)
sends it again: take(True) twice gives "abc" then "abc" instead of "abc" then "".
"""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    if self.stopped or final:
        return self.pending                      # the stream ends here
    keep = min(self.hold, len(self.pending))
    sent = self.pending[:len(self.pending) - keep]
    self.pending = self.pending[len(self.pending) - keep:]
    return sent
