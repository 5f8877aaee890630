"""Misconception: only the end of the stream releases the held-back tail; a stop string already found
(self.stopped) is ignored, so take(final=False) after a stop still withholds the last hold characters.
"""


def take(self, final: bool) -> str:
    """See the stub: the text that can no longer change, removed from self.pending."""
    keep = 0 if final else self.hold
    cut = max(len(self.pending) - keep, 0)
    piece = self.pending[:cut]
    self.pending = self.pending[cut:]
    return piece
