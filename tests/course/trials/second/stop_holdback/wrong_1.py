"""Misconception: "all but the last hold characters" is pending[:-hold], but with hold == 0 (no stop strings,
or only one-character ones) that slice is empty: nothing is sent until the stream is final.
"""


def take(self, final: bool) -> str:
    """See the stub: the text that can no longer change, removed from self.pending."""
    if final or self.stopped:
        piece, self.pending = self.pending, ""
        return piece
    piece = self.pending[:-self.hold]           # keep the last `hold` characters back
    self.pending = self.pending[len(piece):]
    return piece
