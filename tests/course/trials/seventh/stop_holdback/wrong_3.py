"""Misconception: "only the end of the stream flushes the held text: once a
stop string is found the server ends the request anyway, so `final` will
come": the hold is dropped only when final is True, and self.stopped is
ignored. The text before the stop string then waits for a later call: the
engine's loop happens to pass final=True on the step that stops, but any
caller that asks take(False) after a stop (a stream reporting progress
before it aborts, the check's direct calls) gets the last hold characters
withheld, though nothing can change them any more.

Concrete input: stops ["STOP"] (hold 3), add("Hi there STOP now") -> pending
"Hi there ", stopped True; take(False) should return "Hi there " and leave
""; this returns "Hi the" and keeps "re ".
"""


def take(self, final: bool) -> str:
    keep = 0 if final else self.hold
    end = max(0, len(self.pending) - keep)
    piece, self.pending = self.pending[:end], self.pending[end:]
    return piece
