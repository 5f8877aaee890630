"""Right: instead of computing how many characters to keep and slicing once,
it decides first whether anything may be held at all (a stop was found, or
the stream is final: hold nothing), then splits the pending text at an
explicit index clamped to 0, so that a hold of 0 and a pending text shorter
than the hold both come out right without relying on negative slices."""


def take(self, final: bool) -> str:
    if self.stopped or final:
        hold = 0
    else:
        hold = self.hold
    cut = len(self.pending) - hold
    if cut <= 0:
        return ""
    sent = self.pending[:cut]
    self.pending = self.pending[cut:]
    return sent
