"""Misconception: text[:-hold] is "all but the last hold characters" for every hold, but
with no stop strings hold is 0 and text[:-0] is empty: nothing streams until the end.
E.g. stops=[], add("Hello"), take(False) returns "" instead of "Hello".
"""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    if self.stopped or final:
        sent, self.pending = self.pending, ""
        return sent
    sent, self.pending = self.pending[:-self.hold], self.pending[-self.hold:]
    return sent
