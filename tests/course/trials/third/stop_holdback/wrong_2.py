"""Misconception: only the end of the stream releases the held tail; a stop string found mid-stream
changes nothing until take(final=True). stop "END", pieces "ab", "cEND": take(False) after the stop returns "a", not "abc".
"""


def take(self, final: bool) -> str:
    """Return the text that can no longer change, and remove it from ``self.pending``."""
    keep = 0 if final else min(self.hold, len(self.pending))
    cut = len(self.pending) - keep
    piece, self.pending = self.pending[:cut], self.pending[cut:]
    return piece
