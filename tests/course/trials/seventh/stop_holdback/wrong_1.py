"""Misconception: "the text to send is pending[:-hold] and the rest stays"
(Python's negative slice for "all but the last hold characters"). That is
right for hold >= 1, but with hold == 0 (no stop strings, or only
one-character ones) pending[:-0] is pending[:0], the empty string: nothing
is sent until the stream ends, and the whole answer arrives in one piece at
the end instead of streaming. Nothing is lost or repeated, so a check of the
final text alone passes.

Concrete input: stops [] (hold 0), pending "Hello", take(final=False):
the contract returns "Hello" and leaves pending ""; this returns "" and
keeps "Hello".
"""


def take(self, final: bool) -> str:
    if final or self.stopped:
        piece, self.pending = self.pending, ""
        return piece
    piece = self.pending[:-self.hold]
    self.pending = self.pending[len(piece):]
    return piece
