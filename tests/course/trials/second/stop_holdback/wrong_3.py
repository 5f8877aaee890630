"""Misconception: once final or stopped the stream is over, so pending is returned whole but not cleared;
a second take (or any take after a stop) sends the same characters again.
"""


def take(self, final: bool) -> str:
    """See the stub: the text that can no longer change, removed from self.pending."""
    if final or self.stopped:
        return self.pending                     # the end: nothing can change any more
    cut = max(len(self.pending) - self.hold, 0)
    piece, self.pending = self.pending[:cut], self.pending[cut:]
    return piece
