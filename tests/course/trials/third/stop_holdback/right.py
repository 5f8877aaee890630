"""Right: decides first what stays (the last min(hold, len) characters, or nothing once stopped or
final) and sends the pending text with that tail removed (str.removesuffix), instead of cutting at an index.
"""


def take(self, final: bool) -> str:
    """Return the text that can no longer change, and remove it from ``self.pending``."""
    text = self.pending
    if final or self.stopped:
        stays = ""
    else:
        count = min(self.hold, len(text))
        stays = text[len(text) - count:]
    self.pending = stays
    return text.removesuffix(stays) if stays else text
