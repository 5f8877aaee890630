"""Misconception: hold back only what could really start a stop string (the longest tail that is a
prefix of one), not a fixed hold. stop "END", pending "abcd": sends "abcd" where the contract holds back "cd".
"""


def take(self, final: bool) -> str:
    """Return the text that can no longer change, and remove it from ``self.pending``."""
    text = self.pending
    keep = 0
    if not (final or self.stopped):
        for stop in self.stops:
            # the longest proper prefix of this stop string that ends the text
            for k in range(min(len(stop) - 1, len(text)), 0, -1):
                if text.endswith(stop[:k]):
                    keep = max(keep, k)
                    break
    cut = len(text) - keep
    piece, self.pending = text[:cut], text[cut:]
    return piece
