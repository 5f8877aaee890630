"""Right, written differently: it decides how many characters *stay* (none once stopped or
final, else at most self.hold) and splits at len(pending) - stay, instead of computing how many
go; no negative slices, so hold == 0 is safe."""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    stay = 0 if (final or self.stopped) else min(self.hold, len(self.pending))
    split = len(self.pending) - stay
    sent, self.pending = self.pending[:split], self.pending[split:]
    return sent
