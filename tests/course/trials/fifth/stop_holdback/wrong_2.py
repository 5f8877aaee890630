"""Misconception: only the end of the stream (final) releases the held characters; a
stop string found (self.stopped) is left to the final call that follows it. Wrong for
stops=["XYZ"], add("hello XYZ"), take(final=False): sends "hell", not "hello "."""


def take(self, final: bool) -> str:
    """The text that can no longer change, each character once."""
    keep = 0 if final else self.hold
    cut = max(0, len(self.pending) - keep)
    sent, self.pending = self.pending[:cut], self.pending[cut:]
    return sent
