"""Misconception: "hold back the last hold characters" written as the slice
pending[:-hold]. With hold == 0 (no stop strings, or only one-character ones)
pending[:-0] is "", so nothing is streamed until the end: "abc" with stops=[] sends ""."""


def take(self, final: bool) -> str:
    """The text that can no longer change, each character once."""
    if final or self.stopped:
        sent, self.pending = self.pending, ""
        return sent
    sent = self.pending[:-self.hold]
    self.pending = self.pending[len(sent):]
    return sent
