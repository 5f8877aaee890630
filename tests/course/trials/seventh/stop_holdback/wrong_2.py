"""Misconception: "a stop string can only be starting if the text ends with
its first character", so the tail is held back only when the last
character pending is the first character of some stop string, and then only
from that character on; otherwise everything is sent. That misses a stop
string whose first two or more characters have arrived: they are sent, the
next piece completes the stop string, and add() (which searches only the
pending text) never sees it whole, so the stop string's start reaches the
client and the stream does not stop.

Concrete input: stops ["END"] (hold 2): add("abcEN"), take(False) returns
"abcEN" (the last character "N" starts no stop string) where the contract
returns "abc" and keeps "EN"; then add("D more") finds no stop string.
"""


def take(self, final: bool) -> str:
    if final or self.stopped:
        piece, self.pending = self.pending, ""
        return piece
    firsts = {stop[0] for stop in self.stops if stop}
    keep = 1 if self.pending and self.pending[-1] in firsts and self.hold > 0 else 0
    cut = len(self.pending) - keep
    piece, self.pending = self.pending[:cut], self.pending[cut:]
    return piece
