"""Misconception: "all but the last hold characters" is pending[:-hold]. With no stop strings
(hold 0), pending[:-0] is "": nothing streams until the final call.
"""


def take(self, final: bool) -> str:
    """Return the text that can no longer change, and remove it from ``self.pending``."""
    if final or self.stopped:
        piece, self.pending = self.pending, ""
        return piece
    piece, self.pending = self.pending[:-self.hold], self.pending[-self.hold:]
    return piece
