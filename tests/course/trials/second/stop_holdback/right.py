"""Right, cut from the end instead of from the start: the held tail is pending[-keep:] (the whole of pending
when it is shorter), and what goes out is everything before that tail; keep is 0 once stopped or final.
"""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending``. While the stream goes on, hold back the last ``self.hold``
    characters; once stopped or final, send everything pending."""
    keep = self.hold if not (final or self.stopped) else 0
    held = self.pending[-keep:] if keep > 0 else ""
    sent = self.pending[:len(self.pending) - len(held)]
    self.pending = held
    return sent
