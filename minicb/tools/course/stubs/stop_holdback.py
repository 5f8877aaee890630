"""Chapter 9: streaming without sending what a stop string may take back.

The server streams a request's text as tokens arrive, but a request may end
at a stop string, which must not reach the client. Text that might still be
the start of a stop string waits. ``TextStream.add`` takes each new piece and
cuts the pending text at the first stop string; you write ``take``.
Check: ``python -m minicb check stop_holdback``.
"""


def take(self, final: bool) -> str:
    """Return the text that can no longer change and remove it from
    ``self.pending`` (what has arrived and not been sent). Every character is
    sent exactly once, in order. While the stream goes on, hold back the last
    ``self.hold`` characters (the longest stop string less one: they could be
    the start of one). Once a stop string was found (``self.stopped``) or the
    stream is ``final``, nothing more can change: send everything pending.
    """
    raise NotImplementedError
