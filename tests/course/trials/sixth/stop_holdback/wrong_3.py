"""Misconception: only the end of the stream releases the held-back tail; a found stop
string is not looked at (the server passes final=True when it stops anyway). With
stopped set and final False, take still holds hold characters back: "ab" for "abcd", hold 2.
"""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    keep = 0 if final else min(self.hold, len(self.pending))
    sent = self.pending[:len(self.pending) - keep]
    self.pending = self.pending[len(self.pending) - keep:]
    return sent
