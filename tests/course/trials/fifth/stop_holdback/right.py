"""Right: one path for every case instead of a branch per case: it counts the characters
to keep back (0 once stopped or final, else self.hold clamped to what is pending) and
splits pending once at len(pending) - keep."""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    keep = 0 if (final or self.stopped) else min(self.hold, len(self.pending))
    cut = len(self.pending) - keep
    sent, self.pending = self.pending[:cut], self.pending[cut:]
    return sent
